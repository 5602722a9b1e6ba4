//! Images and samplers on ROCr's GPU agents, as clr makes them: `hsa_ext_image_create_with_layout`
//! with the linear layout over the array's own memory and pitches, `hsa_ext_sampler_create`,
//! through the image extension's table (`hsa_sys::images`). The descriptors are the runtime's
//! (ROCr's `Image::srd`, `Sampler::srd`): an image handle is the address of its 12 dwords and a
//! sampler handle of its descriptor, both in system memory the host reads, as clr's
//! `cpuSrd()`/`hwState()` read them before copying them into a texture object.
//!
//! **Never run on a GPU** (this project has none); it runs against the software HSA library,
//! which implements the extension for its agent (`hsa-soft/src/images.rs`).

use std::ffi::c_void;

use hsa_sys::images::Images;
use hsa_sys::{
    hsa_ext_image_descriptor_t, hsa_ext_image_format_t, hsa_ext_image_t,
    hsa_ext_sampler_descriptor_t, hsa_ext_sampler_t, HsaError, HSA_ACCESS_PERMISSION_RO,
    HSA_ACCESS_PERMISSION_RW,
};

use super::agent::HsaAgent;
use crate::device::image::{ImageApi, ImageRequest, SamplerRequest};
use crate::device::DeviceError;

impl HsaAgent {
    fn images(&self) -> Result<Images, DeviceError> {
        Images::load(self.lib()).map_err(|e| self.image_error("loading the image extension", e))
    }

    fn image_error(&self, op: &str, e: HsaError) -> DeviceError {
        self.device_error(op, e)
    }
}

/// Reads `N` dwords at a runtime handle.
///
/// # Safety
/// `handle` is the address of at least `N` readable dwords (ROCr's image and sampler objects
/// keep their descriptor at the handle, in system memory).
unsafe fn words_at<const N: usize>(handle: u64) -> Option<[u32; N]> {
    if handle == 0 || handle % 4 != 0 {
        return None;
    }
    // SAFETY: contract above; read unaligned in case a runtime packs it differently.
    Some(unsafe { std::ptr::read_unaligned(handle as *const [u32; N]) })
}

impl ImageApi for HsaAgent {
    fn create_image(&self, r: &ImageRequest) -> Result<(u64, [u32; 12]), DeviceError> {
        let images = self.images()?;
        let desc = hsa_ext_image_descriptor_t {
            geometry: r.geometry,
            width: r.width as usize,
            height: r.height as usize,
            depth: r.depth as usize,
            array_size: r.array_size as usize,
            format: hsa_ext_image_format_t {
                channel_type: r.format.channel_type(),
                channel_order: r.format.order(),
            },
        };
        let access = if r.writable {
            HSA_ACCESS_PERMISSION_RW
        } else {
            HSA_ACCESS_PERMISSION_RO
        };
        // SAFETY: the request names memory of this agent (an array or pitched allocation the
        // runtime checked), which outlives the texture or surface object that holds the image.
        let image = unsafe {
            images.create_linear(
                self.lib(),
                self.handle(),
                &desc,
                r.data as *const c_void,
                access,
                r.row_pitch as usize,
                r.slice_pitch as usize,
            )
        }
        .map_err(|e| self.image_error("creating an image", e))?;
        // SAFETY: ROCr's image handle is the address of the image object's 12 descriptor
        // dwords (`Image::Convert`), in system memory.
        let words =
            unsafe { words_at::<12>(image.handle) }.ok_or_else(|| DeviceError::Runtime {
                op: "reading an image descriptor".into(),
                status: 0,
                message: format!("the runtime gave image handle {:#x}", image.handle),
            })?;
        tracing::debug!(handle = image.handle, ?words, "image created");
        Ok((image.handle, words))
    }

    fn destroy_image(&self, handle: u64) -> Result<(), DeviceError> {
        let images = self.images()?;
        // SAFETY: the handle came from create_image on this agent; the object using it is
        // being destroyed after its last kernel (the caller synchronised).
        unsafe { images.destroy(self.lib(), self.handle(), hsa_ext_image_t { handle }) }
            .map_err(|e| self.image_error("destroying an image", e))
    }

    fn create_sampler(&self, r: &SamplerRequest) -> Result<(u64, [u32; 4]), DeviceError> {
        let images = self.images()?;
        let desc = hsa_ext_sampler_descriptor_t {
            coordinate_mode: u32::from(r.normalized),
            filter_mode: u32::from(r.linear),
            address_mode: r.address,
        };
        let sampler = images
            .create_sampler(self.lib(), self.handle(), &desc)
            .map_err(|e| self.image_error("creating a sampler", e))?;
        // SAFETY: ROCr's sampler handle is the address of its descriptor dwords
        // (`Sampler::Convert`), in system memory.
        let words =
            unsafe { words_at::<4>(sampler.handle) }.ok_or_else(|| DeviceError::Runtime {
                op: "reading a sampler descriptor".into(),
                status: 0,
                message: format!("the runtime gave sampler handle {:#x}", sampler.handle),
            })?;
        Ok((sampler.handle, words))
    }

    fn destroy_sampler(&self, handle: u64) -> Result<(), DeviceError> {
        let images = self.images()?;
        // SAFETY: as destroy_image.
        unsafe { images.destroy_sampler(self.lib(), self.handle(), hsa_ext_sampler_t { handle }) }
            .map_err(|e| self.image_error("destroying a sampler", e))
    }
}
