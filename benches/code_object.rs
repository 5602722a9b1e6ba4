//! Opening a 10 MB code object with 1,000 kernels and reading all its metadata.
//!
//! The object is real clang-19 output: a generated C source with 1,000 kernels, each padded
//! with 10 KB of `s_nop` so that code dominates the file, compiled once and cached under the
//! target directory. Each kernel reads its implicit arguments, so that its metadata lists
//! the full set of hidden arguments as real HIP kernels do. Without clang (or ld.lld) the bench says so and measures nothing.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use rocload::code_object::{symbols_report, CodeObject};

const KERNELS: usize = 1000;
/// 2,500 four-byte `s_nop 0` per kernel: 10 KB of code each.
const NOPS_PER_KERNEL: usize = 2500;

fn llvm_bin() -> PathBuf {
    std::env::var_os("ROCLOAD_LLVM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/llvm-19/bin"))
}

fn big_code_object() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench_code_object");
    let out = dir.join(format!("k{KERNELS}_n{NOPS_PER_KERNEL}_implicit.co"));
    if out.exists() {
        return Some(out);
    }
    let (clang, lld) = (llvm_bin().join("clang"), llvm_bin().join("ld.lld"));
    if !clang.exists() || !lld.exists() {
        eprintln!(
            "skipping code_object bench: {} or {} is missing",
            clang.display(),
            lld.display()
        );
        return None;
    }
    std::fs::create_dir_all(&dir).ok()?;
    let mut src = String::new();
    for i in 0..KERNELS {
        src.push_str(&format!(
            "__attribute__((amdgpu_kernel)) void kernel_{i}(int *out, const float *in, int n, double s) \
             {{ __asm__ volatile(\".fill {NOPS_PER_KERNEL}, 4, 0xbf800000\"); out[n] = (int)(in[n] * s) + {i} + ((const int *)__builtin_amdgcn_implicitarg_ptr())[n]; }}\n"
        ));
    }
    let c = dir.join("big.c");
    let o = dir.join("big.o");
    let tmp = dir.join(format!("big.{}.co", std::process::id()));
    std::fs::write(&c, src).ok()?;
    let ok = Command::new(&clang)
        .args([
            "--target=amdgcn-amd-amdhsa",
            "-mcpu=gfx1030",
            "-nogpulib",
            "-O1",
            "-c",
        ])
        .arg(&c)
        .arg("-o")
        .arg(&o)
        .status()
        .ok()?
        .success()
        && Command::new(&lld)
            .arg("-shared")
            .arg(&o)
            .arg("-o")
            .arg(&tmp)
            .status()
            .ok()?
            .success();
    if !ok {
        eprintln!("skipping code_object bench: building the input failed");
        return None;
    }
    std::fs::rename(&tmp, &out).ok()?;
    Some(out)
}

/// Touches every metadata value a launcher reads, so that nothing is left lazily undone.
fn read_all_metadata(co: &CodeObject<'_>) -> u64 {
    let mut sum = 0u64;
    for k in co.kernels() {
        sum = sum.wrapping_add(k.descriptor_address);
        if let Some(d) = &k.descriptor {
            sum = sum.wrapping_add(u64::from(d.kernarg_size));
        }
        if let Some(m) = co.kernel_metadata(k) {
            sum = sum
                .wrapping_add(m.kernarg_segment_size)
                .wrapping_add(m.group_segment_fixed_size)
                .wrapping_add(m.private_segment_fixed_size)
                .wrapping_add(m.wavefront_size)
                .wrapping_add(m.sgpr_count.unwrap_or(0))
                .wrapping_add(m.vgpr_count.unwrap_or(0))
                .wrapping_add(m.name.len() as u64);
            for a in &m.args {
                sum = sum
                    .wrapping_add(a.offset)
                    .wrapping_add(a.size)
                    .wrapping_add(a.value_kind.as_str().len() as u64);
            }
        }
    }
    sum
}

/// CPU time of the calling thread: the machine is shared (2 cores, other builds running),
/// so wall time says more about the neighbours than about the parser.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is always supported on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn bench(c: &mut Criterion) {
    let Some(path) = big_code_object() else {
        return;
    };
    // Read once into memory: the bench measures parsing, not the disk.
    let bytes = std::fs::read(&path).expect("read the generated code object");
    let co = CodeObject::parse(&bytes).expect("the generated code object parses");
    assert_eq!(co.kernels().len(), KERNELS);
    assert!(co.kernel_issues().is_empty(), "{:?}", co.kernel_issues());
    // Zero-copy: the code segment's bytes are the input's bytes.
    let text = co
        .segments()
        .find(|s| s.flags.executable())
        .expect("a code segment");
    assert_eq!(
        co.segment_bytes(text).as_ptr(),
        bytes[text.offset as usize..].as_ptr()
    );
    let args: usize = co
        .metadata()
        .map_or(0, |m| m.kernels.iter().map(|k| k.args.len()).sum());
    eprintln!(
        "input: {} ({} bytes, {} kernels, {} args, code segment {} bytes)",
        path.display(),
        bytes.len(),
        co.kernels().len(),
        args,
        text.file_size
    );
    drop(co);

    let mut g = c.benchmark_group("code_object_10MB_1000_kernels");
    g.bench_function("parse_and_read_all_metadata", |b| {
        b.iter(|| {
            let co = CodeObject::parse(black_box(&bytes)).unwrap();
            black_box(read_all_metadata(&co))
        })
    });
    let note = {
        let co = CodeObject::parse(&bytes).unwrap();
        let n = co
            .notes()
            .iter()
            .find(|n| n.n_type == rocload::code_object::NT_AMDGPU_METADATA)
            .copied()
            .unwrap();
        (n.desc_offset as usize, n.desc.len())
    };
    let desc = &bytes[note.0..note.0 + note.1];
    g.bench_function("decode_metadata_only", |b| {
        b.iter(|| black_box(rocload::code_object::decode_metadata(black_box(desc), 0).unwrap()))
    });
    g.bench_function("parse_and_read_all_metadata_cpu_time", |b| {
        b.iter_custom(|iters| {
            let start = thread_cpu_time();
            for _ in 0..iters {
                let co = CodeObject::parse(black_box(&bytes)).unwrap();
                black_box(read_all_metadata(&co));
            }
            thread_cpu_time() - start
        })
    });
    g.bench_function("symbols_report", |b| {
        let co = CodeObject::parse(&bytes).unwrap();
        b.iter(|| black_box(symbols_report("bench", black_box(&co))))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
