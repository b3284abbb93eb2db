#!/usr/bin/env bash
# Builds, on the development machine, what the device machine (no Rust
# toolchain there) runs: the release binary `target/release/stencilc` and the
# test binaries holding the `gpu_*` tests, stripped, in `.devbin/` (`gpu`,
# `native`, `cli`; git ignores the folder). Carry both to the device:
#
#   bash bench/gpu/device_prepare.sh
#   run: bash bench/gpu/next_lease.sh   (carry: .devbin, target/release/stencilc)
#
# The test binaries are built in release mode, so the stencilc they start
# (CARGO_BIN_EXE_stencilc) is target/release/stencilc, and they name this
# checkout's path (CARGO_MANIFEST_DIR): build in /work/main, where
# device_check.sh links the device's copy of the tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
if [ "$root" != /work/main ]; then
    echo "note: building in $root; the test binaries will look for the tree there" >&2
fi
cargo build --release
mkdir -p .devbin
# Cargo prints one JSON message per artifact; the test executables are those
# with a profile.test and an executable.
cargo test --release --no-run --test gpu --test native --test cli --message-format=json \
    | python3 -c '
import json, shutil, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        name = m["target"]["name"]
        shutil.copy(m["executable"], ".devbin/" + name)
        print("copied", name)
'
for bin in gpu native cli; do
    [ -f ".devbin/$bin" ] || { echo "error: .devbin/$bin was not built" >&2; exit 1; }
    strip ".devbin/$bin"
done
du -ch .devbin/* target/release/stencilc | tail -n 1
