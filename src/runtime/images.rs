//! Images and samplers of a device whose own runtime makes their descriptors (ROCr's image
//! extension, [`crate::device::image::ImageApi`]): the texture API asks here, and builds the
//! descriptors itself only where the device has no such runtime (the software agent). Errors
//! name the device and the operation.

use super::{Runtime, RuntimeResult};
use crate::device::image::{ImageRequest, SamplerRequest};
use crate::device::DeviceError;

impl Runtime {
    /// Whether `device`'s own runtime makes image and sampler descriptors.
    ///
    /// # Errors
    /// An unknown device.
    pub fn device_makes_images(&self, device: i64) -> RuntimeResult<bool> {
        Ok(self.device(device)?.device().image_api().is_some())
    }

    fn with_images<T>(
        &self,
        device: i64,
        what: &str,
        f: impl FnOnce(&dyn crate::device::image::ImageApi) -> Result<T, DeviceError>,
    ) -> RuntimeResult<T> {
        let ctx = self.device(device)?;
        let api = ctx.device().image_api().ok_or_else(|| {
            ctx.error(
                what,
                DeviceError::Unsupported {
                    op: "images made by the device's runtime",
                    backend: "soft",
                    reason: "the software agent's descriptors are rocload's own".into(),
                },
            )
        })?;
        f(api).map_err(|e| ctx.error(what, e))
    }

    /// Makes an image through `device`'s runtime: its handle and its 12 dwords.
    ///
    /// # Errors
    /// The runtime's refusal, or a device whose runtime makes none.
    pub fn create_image(
        &self,
        device: i64,
        request: &ImageRequest,
    ) -> RuntimeResult<(u64, [u32; 12])> {
        self.with_images(device, "creating an image", |api| api.create_image(request))
    }

    /// Destroys an image [`create_image`](Self::create_image) made.
    ///
    /// # Errors
    /// As above.
    pub fn destroy_image(&self, device: i64, handle: u64) -> RuntimeResult<()> {
        self.with_images(device, "destroying an image", |api| {
            api.destroy_image(handle)
        })
    }

    /// Makes a sampler through `device`'s runtime: its handle and its 4 dwords.
    ///
    /// # Errors
    /// As above.
    pub fn create_sampler(
        &self,
        device: i64,
        request: &SamplerRequest,
    ) -> RuntimeResult<(u64, [u32; 4])> {
        self.with_images(device, "creating a sampler", |api| {
            api.create_sampler(request)
        })
    }

    /// Destroys a sampler [`create_sampler`](Self::create_sampler) made.
    ///
    /// # Errors
    /// As above.
    pub fn destroy_sampler(&self, device: i64, handle: u64) -> RuntimeResult<()> {
        self.with_images(device, "destroying a sampler", |api| {
            api.destroy_sampler(handle)
        })
    }
}
