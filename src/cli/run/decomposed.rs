//! `stencilc run --decompose`: one program across MPI ranks.
//!
//! Started by `mpirun -np P`, every rank parses and checks the same program
//! and arguments; a failure on any rank (an input missing on one machine, a
//! decomposition that does not fit) is agreed on before anything is computed
//! or written, so that every rank exits with an error and none hangs. The
//! run itself is `stencilc::exec::mpi`; rank 0 prints the summary.

/// Runs `args` decomposed as `spec` says (`auto` or `PxQ[xR]`).
#[cfg(not(feature = "mpi"))]
pub(super) fn run(_args: &super::RunArgs, _spec: &str) -> Result<(), crate::cli::error::CliError> {
    Err(crate::cli::error::CliError::new(
        "`--decompose` needs a stencilc built with MPI, and this one was built without",
        "install Open MPI (`apt-get install libopenmpi-dev openmpi-bin libclang-dev`), build with \
         `cargo build --release --features mpi`, and start it with `mpirun -np P stencilc run ... \
         --decompose auto`",
    ))
}

#[cfg(feature = "mpi")]
pub(super) use with_mpi::run;

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::path::PathBuf;
    use std::time::Instant;

    use mpi::topology::{CartesianCommunicator, Communicator};
    use mpi::traits::*;
    use serde_json::json;
    use stencilc::exec::backend::Backend;
    use stencilc::exec::mpi::driver::{
        all_gather_u64, Driver, InterpParts, PartRunner, RankSummary,
    };
    use stencilc::exec::mpi::halo::Neighbourhood;
    use stencilc::exec::mpi::layout::{parse_spec, DecomposeSpec, Layout};
    use stencilc::exec::mpi::slab::{self, Block};
    use stencilc::exec::native::parts::PartKernel;
    use stencilc::exec::{Buffer, FieldState};
    use stencilc::interp::Stepper;
    use stencilc::io::Format;
    use stencilc::ir::env::{Bindings, RunEnv};
    use stencilc::ir::{FieldId, Program};

    use super::super::RunArgs;
    use super::super::{reject_conflicting_paths, resolve_fields};
    use crate::cli::args::BackendArg;
    use crate::cli::error::CliError;
    use crate::cli::out::stderr_line;
    use crate::cli::scalar::plain_number;
    use crate::cli::verify::{self, Verification};
    use crate::cli::{inputs, params, program};
    use stencilc::exec::options::RunOptions;

    /// What every rank knows before computing.
    struct Setup {
        program: Program,
        env: RunEnv,
        bindings: Bindings,
        inputs: Vec<(FieldId, PathBuf)>,
        outputs: Vec<(FieldId, PathBuf)>,
        dims: Vec<usize>,
    }

    /// An error every rank knows of (each has its message).
    struct Agreed(CliError);

    /// `Ok` on every rank when it is `Ok` on every rank; otherwise each rank
    /// returns its own error, or one naming the ranks that failed.
    fn agree<T>(comm: &impl Communicator, result: Result<T, CliError>) -> Result<T, Agreed> {
        let ok = u64::from(result.is_ok());
        let all = all_gather_u64(comm, &[ok]);
        let failed: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(_, &ok)| ok == 0)
            .map(|(r, _)| r.to_string())
            .collect();
        match result {
            Err(e) => Err(Agreed(e)),
            Ok(_) if !failed.is_empty() => Err(Agreed(CliError::new(
                format!(
                    "rank {} of this run failed (its message is above or in its log)",
                    failed.join(", ")
                ),
                "fix what that rank reports; nothing was written",
            ))),
            Ok(v) => Ok(v),
        }
    }

    fn prepare(args: &RunArgs, spec: &DecomposeSpec, size: usize) -> Result<Setup, CliError> {
        if !matches!(
            args.backend,
            BackendArg::Auto
                | BackendArg::Interp
                | BackendArg::C
                | BackendArg::Opencl
                | BackendArg::Cuda
        ) {
            return Err(CliError::new(
                format!(
                    "--decompose runs the interpreter, the generated C or OpenCL on each \
                     rank; `--backend {}` per rank is not implemented yet",
                    Backend::from(args.backend)
                ),
                "give `--backend c`, `--backend opencl` or `--backend interp` (the default) \
                 with --decompose",
            ));
        }
        let mut program = program::load(&args.program.program, args.program.region)?;
        let inputs = inputs::resolve(&program, &args.inputs)?;
        let outputs = resolve_fields(&program, &args.outputs, "--output")?;
        reject_conflicting_paths(&program, &args.program.program, &inputs, &outputs)?;
        for (field, path) in inputs.iter().chain(&outputs) {
            if Format::from_path(path)? != Format::Npy {
                return Err(CliError::new(
                    format!(
                        "`{}`: with --decompose, inputs and outputs are `.npy` files (each rank \
                         reads and writes its own block of them)",
                        path.display()
                    ),
                    format!(
                        "convert it to .npy, or run without --decompose (field `{}`)",
                        program.fields[field.0].name
                    ),
                ));
            }
        }
        inputs::check(&program, &inputs)?;
        let values = inputs::values(&program, &args.params.sets, &inputs, &|_| {})?;
        params::bind_hint_values(&mut program, &args.params.sets, &values)?;
        let bindings = params::complete(&program, values)?;
        let env = stencilc::exec::bind(&program, &bindings)?;
        let rank = env.grid_dims().first().map_or(1, Vec::len);
        let has_reductions = program
            .iterate
            .as_ref()
            .is_some_and(|i| !i.reductions.is_empty());
        let dims = match spec {
            DecomposeSpec::Given(dims) => {
                let product: usize = dims.iter().product();
                if product != size {
                    let text: Vec<String> = dims.iter().map(usize::to_string).collect();
                    return Err(CliError::new(
                        format!(
                            "--decompose {} makes {product} ranks, but this run has {size}",
                            text.join("x")
                        ),
                        format!("give a decomposition whose product is {size}, or `auto`"),
                    ));
                }
                dims.clone()
            }
            DecomposeSpec::Auto => balanced_dims(size, rank),
        };
        if rank == 3 && dims.len() == 3 && dims[2] > 1 && has_reductions {
            return Err(CliError::new(
                "a 3-D program with reductions cannot cut its innermost axis: each rank's share \
                 of a reduction row would not be contiguous, and the sum would not match the \
                 single-process one to the last bit",
                "give 1 rank along the last axis (`PxQx1`), or `--decompose auto`",
            ));
        }
        let layout = Layout::new(&program, &env, &dims);
        layout.map_err(|e| CliError::new(e.message, e.help))?;
        Ok(Setup {
            program,
            env,
            bindings,
            inputs,
            outputs,
            dims,
        })
    }

    /// MPI's balanced ranks per axis (`MPI_Dims_create`); in 3-D the
    /// innermost axis is not cut (contiguous halos, chainable reductions).
    fn balanced_dims(size: usize, rank: usize) -> Vec<usize> {
        let mut dims = vec![0i32; rank];
        if rank == 3 {
            dims[2] = 1;
        }
        // SAFETY: `dims` has `rank` elements, as MPI_Dims_create reads and writes.
        unsafe {
            mpi::ffi::MPI_Dims_create(size as i32, rank as i32, dims.as_mut_ptr());
        }
        dims.into_iter().map(|d| d as usize).collect()
    }

    /// Runs the command on this rank.
    ///
    /// An error every rank agreed on is printed by every rank, which then
    /// wait for each other before exiting (so that mpirun, which ends the job
    /// when the first rank fails, cuts no message short). Any other error
    /// aborts the job (`MPI_Abort`): the other ranks may be waiting for this one.
    pub(in crate::cli) fn run(args: &RunArgs, spec: &str) -> Result<(), CliError> {
        let Some(universe) = mpi::initialize() else {
            return Err(CliError::new(
                "MPI could not be initialised",
                "start stencilc under `mpirun -np P`",
            ));
        };
        let world = universe.world();
        match on_rank(args, spec, &world) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => {
                eprintln!("{error}");
                world.abort(1)
            }
            Err(Agreed(error)) => {
                eprintln!("{error}");
                world.barrier();
                drop(universe);
                std::process::exit(1)
            }
        }
    }

    /// The run on this rank: agreed errors outside, this rank's own inside.
    fn on_rank(
        args: &RunArgs,
        spec: &str,
        world: &mpi::topology::SimpleCommunicator,
    ) -> Result<Result<(), CliError>, Agreed> {
        let spec = parse_spec(spec).map_err(|e| {
            CliError::new(
                e.to_string(),
                "give `--decompose auto` or ranks per axis like `2x2`",
            )
        });
        let spec = agree(world, spec)?;

        let started = Instant::now();
        let setup = prepare(args, &spec, world.size() as usize);
        let setup = agree(world, setup)?;
        let layout = Layout::new(&setup.program, &setup.env, &setup.dims).expect("checked");
        let cart: CartesianCommunicator = world
            .create_cartesian_communicator(
                &setup.dims.iter().map(|&d| d as i32).collect::<Vec<_>>(),
                &vec![true; setup.dims.len()],
                false,
            )
            .expect("every rank is in the grid");
        let coords: Vec<usize> = cart
            .rank_to_coordinates(cart.rank())
            .into_iter()
            .map(|c| c as usize)
            .collect();
        let me = cart.rank();
        let local = layout.local_program(&setup.program, &setup.env, &coords);
        let local_env = stencilc::exec::bind(&local, &setup.bindings);
        let owned = layout.owned(&coords);
        let origin = layout.origin(&coords);
        let local_dims = layout.local_dims(&coords);
        let block = Block {
            global: &layout.global,
            owned: &owned,
            origin: &origin,
            local: &local_dims,
        };
        let prepared = local_env.map_err(CliError::from).and_then(|env| {
            let state = read_block(&local, &env, &setup, &block, me)?;
            let stepper = Stepper::new(&local, &env, &state)?;
            Ok((env, state, stepper))
        });
        let (local_env, mut state, stepper) = agree(world, prepared)?;
        let CompiledParts {
            c: mut c_parts,
            opencl: mut opencl_parts,
            cuda: mut cuda_parts,
        } = compiled_parts(args, &setup, world, &local, &local_env, &state)?;
        let mut interp_parts = InterpParts {
            stepper: &stepper,
            local: &local,
            local_env: &local_env,
        };
        let runner: &mut dyn PartRunner = if let Some(kernel) = &mut c_parts {
            kernel
        } else if let Some(kernels) = &mut opencl_parts {
            kernels
        } else if let Some(kernels) = &mut cuda_parts {
            kernels
        } else {
            &mut interp_parts
        };
        let backend = runner.backend();
        note_ignored_flags(args, me);
        let driver = Driver {
            neighbourhood: Neighbourhood {
                comm: &cart,
                layout: &layout,
                coords: coords.clone(),
            },
            program: &setup.program,
            env: &setup.env,
            local: &local,
            local_env: &local_env,
        };
        let ran = match driver.run(&stepper, runner, &mut state) {
            Ok(ran) => ran,
            Err(e) => return Ok(Err(e.into())),
        };
        let verification = if args.verify {
            let checked = verify(args, &setup, &layout, &cart, &local, &state, &ran, backend);
            agree(world, checked)?
        } else {
            None
        };

        let written = Instant::now();
        write_outputs(&setup, &layout, &block, world, &local, &state, me)?;
        let write_time = written.elapsed();

        let mine: [u64; PER_RANK_WORDS] = [
            ran.compute.as_secs_f64().to_bits(),
            ran.communication.as_secs_f64().to_bits(),
            ran.bytes_sent,
            ran.device_bytes_down,
            ran.device_bytes_up,
        ];
        let all = all_gather_u64(&cart, &mine);
        if me != 0 {
            return Ok(Ok(()));
        }
        Ok(report(
            args,
            &setup,
            &layout,
            &ran,
            &all,
            (write_time, started.elapsed()),
            &cart,
            backend,
            verification.as_ref(),
        ))
    }

    /// This rank's block of every input file, as the initial state of its
    /// local program (fields without an input start at zero).
    fn read_block(
        local: &Program,
        local_env: &RunEnv,
        setup: &Setup,
        block: &Block<'_>,
        me: i32,
    ) -> Result<FieldState, CliError> {
        let mut fields = Vec::with_capacity(local.fields.len());
        for (index, field) in local.fields.iter().enumerate() {
            let points: usize = local_env.grid_dims()[field.grid.0].iter().product();
            let mut first = Buffer::zeros(field.ty, points);
            if let Some((_, path)) = setup.inputs.iter().find(|(f, _)| f.0 == index) {
                slab::read(path, block, &mut first).map_err(|e| {
                    CliError::new(
                        e.to_string(),
                        format!("rank {me} reads its block of this file"),
                    )
                })?;
            }
            let mut levels: Vec<Buffer> = (1..field.levels()).map(|_| first.clone()).collect();
            levels.push(first);
            fields.push(levels);
        }
        Ok(FieldState { fields })
    }

    /// The compiled part runners of `--backend c`, `opencl` or `cuda` (none
    /// for the interpreter), built on every rank and agreed on.
    struct CompiledParts {
        c: Option<PartKernel>,
        opencl: Option<stencilc::exec::opencl::OpenClParts>,
        cuda: Option<stencilc::exec::cuda::CudaParts>,
    }

    fn compiled_parts(
        args: &RunArgs,
        setup: &Setup,
        world: &mpi::topology::SimpleCommunicator,
        local: &Program,
        local_env: &RunEnv,
        state: &FieldState,
    ) -> Result<CompiledParts, Agreed> {
        let c_parts = match args.backend {
            BackendArg::C => {
                // Every rank's unit is the same C (sizes are read at run
                // time): the first rank of each machine compiles it, the
                // others then find it in the cache.
                let node = world.split_shared(world.rank());
                let build = || {
                    super::super::run_options(&setup.program, args).and_then(|options| {
                        let options = per_rank_threads(node.size() as usize, options);
                        PartKernel::prepare(local, local_env, state, &options)
                            .map_err(CliError::from)
                    })
                };
                let first = (node.rank() == 0).then(build);
                node.barrier();
                let parts = agree(world, first.unwrap_or_else(build))?;
                // What the cache said (an entry rebuilt, an unwritable
                // folder), once a machine.
                if node.rank() == 0 && !args.quiet {
                    for note in &parts.kernel.notes {
                        crate::cli::out::stderr_line(&format!("note: {note}"));
                    }
                }
                Some(parts)
            }
            _ => None,
        };
        let opencl_parts = match args.backend {
            BackendArg::Opencl => {
                let built = super::super::run_options(&setup.program, args).and_then(|options| {
                    stencilc::exec::opencl::part_runner(local, local_env, state, &options)
                        .map_err(CliError::from)
                });
                Some(agree(world, built)?)
            }
            _ => None,
        };
        let cuda_parts = match args.backend {
            BackendArg::Cuda => {
                // One GPU per rank of a machine, as far as there are GPUs.
                let node = world.split_shared(world.rank());
                stencilc::exec::cuda::choose_device(node.rank() as usize);
                let built = super::super::run_options(&setup.program, args).and_then(|options| {
                    stencilc::exec::cuda::part_runner(local, local_env, state, &options)
                        .map_err(CliError::from)
                });
                Some(agree(world, built)?)
            }
            _ => None,
        };
        Ok(CompiledParts {
            c: c_parts,
            opencl: opencl_parts,
            cuda: cuda_parts,
        })
    }

    /// Rank 0's notes on the schedule flags a decomposed run ignores.
    fn note_ignored_flags(args: &RunArgs, me: i32) {
        let per_rank_ignored = [
            (args.schedule.time.is_some(), "--time"),
            (args.schedule.cpu_tile.is_some(), "--cpu-tile"),
            (args.schedule.cpu_order.is_some(), "--cpu-order"),
            (args.schedule.fuse, "--fuse"),
            (args.schedule.shm.is_some(), "--shm"),
        ];
        for (_, flag) in per_rank_ignored.iter().filter(|(given, _)| *given) {
            if me == 0 && !args.quiet {
                eprintln!(
                    "note: {flag} is ignored with --decompose: each rank runs one stencil part \
                     at a time, one sweep each, exchanging halos between them"
                );
            }
        }
    }

    /// Every output written: a temporary file sized by rank 0, blocks written
    /// by every rank, renamed by rank 0 once all succeeded.
    fn write_outputs(
        setup: &Setup,
        layout: &Layout,
        block: &Block<'_>,
        world: &mpi::topology::SimpleCommunicator,
        local: &Program,
        state: &FieldState,
        me: i32,
    ) -> Result<(), Agreed> {
        let created: Result<Vec<u64>, CliError> = if me == 0 {
            setup
                .outputs
                .iter()
                .map(|(f, path)| {
                    slab::create(path, setup.program.fields[f.0].ty, &layout.global).map_err(|e| {
                        CliError::new(e.to_string(), "choose an output in a writable folder")
                    })
                })
                .collect()
        } else {
            Ok(Vec::new())
        };
        let remove_temporaries = || {
            if me == 0 {
                for (_, path) in &setup.outputs {
                    let _ = std::fs::remove_file(slab::temporary(path));
                }
            }
        };
        let created = agree(world, created).inspect_err(|_| remove_temporaries())?;
        // Removed by the signal handler if the run is interrupted before the
        // renames; given up once they are done.
        let _listed: Vec<stencilc::files::cleanup::Listed> = if me == 0 {
            setup
                .outputs
                .iter()
                .map(|(_, path)| {
                    stencilc::files::cleanup::Listed::temporary(&slab::temporary(path))
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut offsets = vec![0u64; setup.outputs.len()];
        if me == 0 {
            offsets.copy_from_slice(&created);
        }
        world.process_at_rank(0).broadcast_into(&mut offsets[..]);
        let wrote: Result<(), CliError> =
            setup
                .outputs
                .iter()
                .zip(&offsets)
                .try_for_each(|((f, path), &offset)| {
                    slab::write(path, offset, block, state.newest(local, f.0))
                        .map_err(|e| CliError::new(e.to_string(), "check the output folder"))
                });
        agree(world, wrote).inspect_err(|_| remove_temporaries())?;
        let renamed: Result<(), CliError> = if me == 0 {
            setup.outputs.iter().try_for_each(|(_, path)| {
                slab::commit(path).map_err(|e| {
                    CliError::new(
                        format!("cannot write `{}`: {e}", path.display()),
                        "check the output folder",
                    )
                })
            })
        } else {
            Ok(())
        };
        agree(world, renamed).inspect_err(|_| remove_temporaries())?;
        Ok(())
    }

    /// `options` with `threads` set, when neither `--threads` nor
    /// `OMP_NUM_THREADS` says, to this machine's cores shared among the
    /// ranks on it (the ranks of one node would otherwise each start a thread
    /// per core).
    fn per_rank_threads(on_node: usize, options: RunOptions) -> RunOptions {
        if options.threads.is_some() || std::env::var_os("OMP_NUM_THREADS").is_some() {
            return options;
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        RunOptions {
            threads: Some((cores / on_node.max(1)).max(1) as u32),
            ..options
        }
    }

    /// `--verify`: rank 0 runs the single-process interpreter on the whole
    /// grid (it reads the whole inputs and holds the whole grid, which a
    /// decomposed run otherwise never does) and compares every compared
    /// field with the ranks' blocks, which each rank sends it; iterations and
    /// reductions must match too. `Some` on rank 0, `None` elsewhere; an
    /// error on rank 0 when the comparison failed.
    #[allow(clippy::too_many_arguments)]
    fn verify(
        args: &RunArgs,
        setup: &Setup,
        layout: &Layout,
        cart: &CartesianCommunicator,
        local: &Program,
        state: &FieldState,
        ran: &RankSummary,
        backend: &'static str,
    ) -> Result<Option<Verification>, CliError> {
        let program = &setup.program;
        let compared: Vec<FieldId> = if setup.outputs.is_empty() {
            (0..program.fields.len()).map(FieldId).collect()
        } else {
            setup.outputs.iter().map(|(f, _)| *f).collect()
        };
        let me = cart.rank();
        let block_of = |r: i32| {
            let coords: Vec<usize> = cart
                .rank_to_coordinates(r)
                .into_iter()
                .map(|c| c as usize)
                .collect();
            (
                layout.owned(&coords),
                layout.origin(&coords),
                layout.local_dims(&coords),
            )
        };
        if me != 0 {
            let (owned, origin, dims) = block_of(me);
            let block = Block {
                global: &layout.global,
                owned: &owned,
                origin: &origin,
                local: &dims,
            };
            for f in &compared {
                let data = slab::pack(&block, state.newest(local, f.0));
                cart.process_at_rank(0)
                    .send_with_tag(&data[..], 200 + f.0 as i32);
            }
            return Ok(None);
        }
        let mut wholes = Vec::with_capacity(compared.len());
        for f in &compared {
            let field = &program.fields[f.0];
            let points: usize = setup.env.grid_dims()[field.grid.0].iter().product();
            let mut whole = Buffer::zeros(field.ty, points);
            for r in 0..cart.size() {
                let (owned, origin, dims) = block_of(r);
                let block = Block {
                    global: &layout.global,
                    owned: &owned,
                    origin: &origin,
                    local: &dims,
                };
                let data = if r == 0 {
                    slab::pack(&block, state.newest(local, f.0))
                } else {
                    cart.process_at_rank(r)
                        .receive_vec_with_tag::<u8>(200 + f.0 as i32)
                        .0
                };
                if !slab::unpack_into(&block, &data, &mut whole) {
                    return Err(CliError::new(
                        format!("--verify: rank {r} sent a block of the wrong size"),
                        "report this as a bug in stencilc",
                    ));
                }
            }
            wholes.push(whole);
        }
        let mut reference = super::super::initial_state(program, &setup.env, &setup.inputs)?;
        let reference_summary = stencilc::interp::run(program, &setup.env, &mut reference)?;
        let used = match backend {
            "c" => Backend::C,
            "opencl" => Backend::OpenCl,
            "cuda" => Backend::Cuda,
            _ => Backend::Interp,
        };
        let fields = compared
            .iter()
            .zip(&wholes)
            .map(|(f, whole)| {
                verify::compare_field(
                    &program.fields[f.0].name,
                    used,
                    args.fma.fma,
                    whole,
                    reference.newest(program, f.0),
                    &setup.env.grid_dims()[program.fields[f.0].grid.0],
                )
            })
            .collect();
        let verification = Verification {
            backend: used,
            iterations: ran.summary.iterations,
            reference_iterations: reference_summary.iterations,
            fields,
        };
        if let Some(error) = verification.error() {
            return Err(error);
        }
        let exact = |a: &Option<stencilc::ir::Value>, b: &Option<stencilc::ir::Value>| match (a, b)
        {
            // Debug prints the shortest text that reads back to the same bits.
            (Some(a), Some(b)) => format!("{a:?}") == format!("{b:?}"),
            (None, None) => true,
            _ => false,
        };
        for ((name, got), (_, want)) in ran
            .summary
            .reductions
            .iter()
            .zip(&reference_summary.reductions)
        {
            if !exact(got, want) {
                return Err(CliError::new(
                    format!(
                        "--verify: reduction `{name}` is {} decomposed and {} in the \
                         single-process interpreter; no output written",
                        got.map_or("not evaluated".into(), plain_number),
                        want.map_or("not evaluated".into(), plain_number),
                    ),
                    "this is a bug in stencilc: please report it with the program and the \
                     command line",
                ));
            }
        }
        Ok(Some(verification))
    }

    /// Words each rank contributes to the report: compute and communication
    /// seconds (as bits), bytes sent, device bytes down and up.
    const PER_RANK_WORDS: usize = 5;

    #[allow(clippy::too_many_arguments)]
    fn report(
        args: &RunArgs,
        setup: &Setup,
        layout: &Layout,
        ran: &RankSummary,
        all: &[u64],
        (write, total): (std::time::Duration, std::time::Duration),
        cart: &CartesianCommunicator,
        backend: &str,
        verification: Option<&Verification>,
    ) -> Result<(), CliError> {
        let s = &ran.summary;
        let dims_text: Vec<String> = layout.dims.iter().map(usize::to_string).collect();
        if !args.json {
            let mut text = format!(
                "{}: {} iteration{} on {backend}",
                setup.program.name,
                s.iterations,
                if s.iterations == 1 { "" } else { "s" },
            );
            if s.stopped_by_check {
                text.push_str(", stopped by the check");
            }
            text.push_str(&format!(
                " ({:.3?} computing, {} ranks as {})\n",
                s.times.compute,
                cart.size(),
                dims_text.join("x")
            ));
            for (name, value) in &s.reductions {
                match value {
                    Some(v) => text.push_str(&format!("  {name} = {}\n", plain_number(*v))),
                    None => text.push_str(&format!("  {name} was not evaluated\n")),
                }
            }
            if let Some(v) = verification {
                text.push_str(&v.to_text());
            }
            return crate::cli::out::stdout_text(&text);
        }
        let ranks: Vec<serde_json::Value> = all
            .chunks_exact(PER_RANK_WORDS)
            .enumerate()
            .map(|(r, c)| {
                let coords = cart.rank_to_coordinates(r as i32);
                let coords: Vec<usize> = coords.into_iter().map(|c| c as usize).collect();
                json!({
                    "rank": r,
                    "coords": coords,
                    "block": layout.owned(&coords),
                    "compute": f64::from_bits(c[0]),
                    "communication": f64::from_bits(c[1]),
                    "bytes_sent": c[2],
                    "device_bytes_down": c[3],
                    "device_bytes_up": c[4],
                })
            })
            .collect();
        let reductions: serde_json::Map<String, serde_json::Value> = s
            .reductions
            .iter()
            .map(|(name, v)| {
                let v = v.map_or(serde_json::Value::Null, |v| {
                    serde_json::from_str(&plain_number(v)).unwrap_or(serde_json::Value::Null)
                });
                (name.clone(), v)
            })
            .collect();
        let summary = json!({
            "program": setup.program.name,
            "backend": backend,
            "iterations": s.iterations,
            "max_iterations": setup.env.max_iters(),
            "stopped_by_check": s.stopped_by_check,
            "reductions": reductions,
            "decomposition": {
                "ranks": cart.size(),
                "dims": layout.dims,
                "grid": layout.global,
                "ghost": layout.ghost,
                "per_rank": ranks,
            },
            "bytes_exchanged": all.chunks_exact(PER_RANK_WORDS).map(|c| c[2]).sum::<u64>(),
            "times": {
                "iterate": s.times.compute.as_secs_f64(),
                "write": write.as_secs_f64(),
                "total": total.as_secs_f64(),
            },
        });
        let mut summary = summary;
        if let Some(v) = verification {
            summary["verify"] = v.to_json();
        }
        if args.verbose {
            stderr_line(&format!("decomposition {}", dims_text.join("x")));
        }
        crate::cli::out::stdout_text(&format!("{summary:#}\n"))
    }
}
