# Sourced by the lease scripts (next_lease.sh, confirm_lease.sh): `part NEED
# CMD...` runs CMD if NEED seconds of the lease's BUDGET are left (counted by
# bash's SECONDS), under a timeout of what is left; else it says it skipped.
part() {
    local need="$1"
    shift
    local left=$((budget - SECONDS))
    if [ "$left" -lt "$need" ]; then
        echo "== skipped (needs ${need} s, ${left} s left): $*"
        return 0
    fi
    timeout "$left" "$@"
}
