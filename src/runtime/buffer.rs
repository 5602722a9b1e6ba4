//! Typed device memory for Rust callers, in the style of cudarc: a [`DeviceBuffer<T>`] owns an
//! allocation on one device (it holds the device, so the device outlives it), copies to and from
//! host slices, and is freed when dropped, after the device has finished with it.
//!
//! Only plain-data element types ([`DeviceCopy`]) are allowed, so device bytes can be read back
//! as `T`. Not for memory shared by several devices or raw pointers from C (the runtime's memory
//! module and the C ABI handle those).

use std::marker::PhantomData;
use std::sync::Arc;

use super::device::DeviceContext;
use super::stream::Stream;
use super::{RuntimeError, RuntimeResult};
use crate::device::MemoryKind;

/// Types whose every bit pattern is a valid value and that hold no pointers the host owns, so
/// they can be copied to and from device memory byte for byte.
///
/// # Safety
/// Implementors must be `Copy`, have no padding-dependent invariants, and accept any bit
/// pattern (integers, floats, arrays and `repr(C)` structs of those).
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {}

macro_rules! device_copy {
    ($($t:ty),*) => { $(
        // SAFETY: primitive numbers accept every bit pattern and own nothing.
        unsafe impl DeviceCopy for $t {}
    )* };
}
device_copy!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, f32, f64, usize, isize);
// SAFETY: an array of plain data is plain data.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

/// `len` elements of `T` in one device's memory; freed on drop, after the device is idle (as
/// `hipFree`).
///
/// # Examples
///
/// ```
/// use rocload::backend::SoftAgent;
/// use rocload::runtime::{DeviceBuffer, Runtime, RuntimeError, RuntimeOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = SoftAgent::new("gfx1030".parse()?).device();
/// let rt = Runtime::with_devices(vec![agent], RuntimeOptions::default());
/// let dev = rt.device(0)?;
///
/// let host: Vec<u32> = (0..1000).collect();
/// let buffer = DeviceBuffer::from_slice(dev, &host)?;
/// assert_eq!(buffer.len(), 1000);
/// assert_eq!(buffer.to_vec()?, host);
/// // The runtime's memory table knows it, interior pointers included.
/// let info = rt.pointer_info(buffer.address() + 40).expect("a device allocation");
/// assert_eq!(info.allocation.base, buffer.address());
///
/// // Copies check the lengths first.
/// let mut short = vec![0u32; 10];
/// assert!(matches!(
///     buffer.copy_to(&mut short),
///     Err(RuntimeError::LengthMismatch { host: 10, buffer: 1000 })
/// ));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct DeviceBuffer<T: DeviceCopy> {
    device: Arc<DeviceContext>,
    address: u64,
    len: usize,
    _type: PhantomData<T>,
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// `len` zeroed elements on `device`.
    ///
    /// # Errors
    /// [`RuntimeError::Device`] when the device is out of memory; [`RuntimeError::TooLarge`]
    /// when the size overflows.
    pub fn zeroed(device: &Arc<DeviceContext>, len: usize) -> RuntimeResult<Self> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| RuntimeError::TooLarge {
                    what: format!(
                        "a buffer of {len} elements of {} bytes",
                        std::mem::size_of::<T>()
                    ),
                    size: u64::MAX,
                    limit: usize::MAX as u64,
                })?;
        let allocation = device
            .device()
            .allocate(bytes as u64, MemoryKind::Device)
            .map_err(|e| device.error("allocating a buffer", e))?;
        Ok(DeviceBuffer {
            device: device.clone(),
            address: allocation.base,
            len,
            _type: PhantomData,
        })
    }

    /// A copy of `host` on `device`.
    ///
    /// # Errors
    /// As [`zeroed`](Self::zeroed) and [`copy_from`](Self::copy_from).
    pub fn from_slice(device: &Arc<DeviceContext>, host: &[T]) -> RuntimeResult<Self> {
        let mut buffer = DeviceBuffer::zeroed(device, host.len())?;
        buffer.copy_from(host)?;
        Ok(buffer)
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address (what a kernel's pointer argument takes).
    pub fn address(&self) -> u64 {
        self.address
    }

    /// The device it lives on.
    pub fn device(&self) -> &Arc<DeviceContext> {
        &self.device
    }

    fn bytes(&self) -> u64 {
        (self.len * std::mem::size_of::<T>()) as u64
    }

    /// Copies `host` into the buffer, in the null stream's order, and waits for it.
    ///
    /// # Errors
    /// [`RuntimeError::LengthMismatch`] when the lengths differ; stream errors (including a
    /// kernel that failed earlier on the device).
    pub fn copy_from(&mut self, host: &[T]) -> RuntimeResult<()> {
        self.check_len(host.len())?;
        let stream = self.device.null_stream()?;
        self.copy(&stream, self.address, host.as_ptr() as u64)
    }

    /// Copies the buffer into `host`, in the null stream's order, and waits for it.
    ///
    /// # Errors
    /// As [`copy_from`](Self::copy_from).
    pub fn copy_to(&self, host: &mut [T]) -> RuntimeResult<()> {
        self.check_len(host.len())?;
        let stream = self.device.null_stream()?;
        self.copy(&stream, host.as_mut_ptr() as u64, self.address)
    }

    /// The buffer's contents as a new vector.
    ///
    /// # Errors
    /// As [`copy_to`](Self::copy_to).
    pub fn to_vec(&self) -> RuntimeResult<Vec<T>> {
        let mut v = Vec::new();
        v.try_reserve_exact(self.len)
            .map_err(|_| RuntimeError::HostOutOfMemory {
                what: format!("a host copy of {} elements", self.len),
                size: self.bytes(),
            })?;
        // SAFETY: T accepts every bit pattern (DeviceCopy), so zeroed elements are valid
        // values; they are all overwritten by the copy below.
        v.resize(self.len, unsafe { std::mem::zeroed() });
        self.copy_to(&mut v)?;
        Ok(v)
    }

    fn check_len(&self, host: usize) -> RuntimeResult<()> {
        if host == self.len {
            Ok(())
        } else {
            Err(RuntimeError::LengthMismatch {
                host,
                buffer: self.len,
            })
        }
    }

    fn copy(&self, stream: &Stream, dst: u64, src: u64) -> RuntimeResult<()> {
        let device = self.device.device().clone();
        let len = self.bytes();
        stream.host_work(
            "copying a buffer",
            Box::new(move || {
                // SAFETY: one side is this buffer's allocation (the device checks it), the other
                // a host slice of the same length borrowed for the duration of this call, which
                // waits for the copy below.
                unsafe { device.copy(dst, src, len) }
            }),
        )?;
        stream.synchronize()
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // As hipFree: wait until nothing on the device can still be using the memory.
        if let Err(e) = self.device.synchronize_ignoring_errors() {
            tracing::debug!(error = %e, "waiting for the device before freeing a buffer failed");
        }
        if let Err(e) = self.device.device().free(self.address) {
            tracing::debug!(error = %e, "freeing a buffer failed");
        }
    }
}
