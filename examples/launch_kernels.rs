//! Launches HIP kernels compiled by clang-19 from Rust, on the software agent: loads the
//! shipped compressed bundle `tests/fixtures/hip/vadd.device.ccob` (or a code object or bundle
//! given as the first argument), then runs `vadd` and the templated `axpy<float>` with typed
//! buffers and arguments the launch builder checks against the kernels' metadata, and compares
//! with the same computation on the host.
//!
//! ```text
//! cargo run --example launch_kernels [CODE_OBJECT_OR_BUNDLE]
//! ```

use std::sync::Arc;

use rocload::backend::SoftAgent;
use rocload::device::Device;
use rocload::runtime::{DeviceBuffer, Runtime, RuntimeOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/fixtures/hip/vadd.device.ccob".into());
    let bytes: Arc<[u8]> = std::fs::read(&path)?.into();

    // One software gfx1030 device; `Runtime::global()` would read ROCLOAD_* instead.
    let agent: Arc<dyn Device> = SoftAgent::new("gfx1030".parse()?).device();
    let rt = Runtime::with_devices(vec![agent], RuntimeOptions::default());
    let dev = rt.device(0)?.clone();
    let module = rt.load_module(bytes, 0)?;

    let n = 10_000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let da = DeviceBuffer::from_slice(&dev, &a)?;
    let db = DeviceBuffer::from_slice(&dev, &b)?;
    let dc = DeviceBuffer::<f32>::zeroed(&dev, n)?;

    let block = 256u32;
    let grid = (n as u32).div_ceil(block);
    module
        .function("vadd")?
        .launch()
        .grid([grid, 1, 1])
        .block([block, 1, 1])
        .arg(&da)
        .arg(&db)
        .arg(&dc)
        .arg(n as i32)
        .submit(&rt)?;

    // axpy<float>(alpha, x, y, n): y = alpha * x + y, in place on a copy of b.
    let alpha = 1.5f32;
    let dy = DeviceBuffer::from_slice(&dev, &b)?;
    module
        .function("_Z4axpyIfEvT_PKS0_PS0_i")?
        .launch()
        .grid([grid, 1, 1])
        .block([block, 1, 1])
        .arg(alpha)
        .arg(&da)
        .arg(&dy)
        .arg(n as i32)
        .submit(&rt)?;
    dev.synchronize()?;

    let sum = dc.to_vec()?;
    let axpy = dy.to_vec()?;
    let sum_ok = sum
        .iter()
        .zip(a.iter().zip(&b))
        .all(|(c, (x, y))| *c == x + y);
    let axpy_ok = axpy
        .iter()
        .zip(a.iter().zip(&b))
        .all(|(r, (x, y))| *r == alpha.mul_add(*x, *y) || *r == alpha * x + y);
    println!(
        "vadd on {n} elements: {}",
        if sum_ok {
            "matches the host"
        } else {
            "MISMATCH"
        }
    );
    println!(
        "axpy<float> on {n} elements: {}",
        if axpy_ok {
            "matches the host"
        } else {
            "MISMATCH"
        }
    );
    if sum_ok && axpy_ok {
        Ok(())
    } else {
        Err("results differ from the host".into())
    }
}
