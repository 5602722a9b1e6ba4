//! HSA's image extension (`hsa_ext_image_*`, `hsa_ext_sampler_*`) through its function table,
//! as `hsa_system_get_major_extension_table(HSA_EXTENSION_IMAGES, 1, ...)` gives it: ROCr loads
//! its image library (`libhsa-ext-image64` in 5.x, built in later) behind that table, and a
//! runtime without one (ROCr with `HSA_DISABLE_IMAGE=1`) fails the query. Checked calls naming
//! what failed, as in [`crate::result`].
//!
//! Nothing here has run against ROCr on a GPU: the project has none. It runs against the
//! software HSA library, which implements the extension for its software agent.

use std::ffi::c_void;

use crate::bindings::{
    hsa_access_permission_t, hsa_agent_t, hsa_dim3_t, hsa_ext_image_descriptor_t,
    hsa_ext_image_region_t, hsa_ext_image_t, hsa_ext_images_1_pfn_t, hsa_ext_sampler_descriptor_t,
    hsa_ext_sampler_t, HSA_EXTENSION_IMAGES, HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, HSA_STATUS_SUCCESS,
};
use crate::error::HsaError;
use crate::result::error_for;
use crate::HsaLibrary;

/// The image extension's table (version 1).
#[derive(Debug, Clone, Copy)]
pub struct Images {
    table: hsa_ext_images_1_pfn_t,
}

/// A table entry, or the error naming it.
macro_rules! entry {
    ($self:expr, $name:ident) => {
        match $self.table.$name {
            Some(f) => f,
            None => {
                return Err(HsaError::invalid_argument(
                    stringify!($name),
                    "the image extension's table has no such entry".into(),
                ))
            }
        }
    };
}

fn check(lib: &HsaLibrary, call: &'static str, status: u32) -> Result<(), HsaError> {
    if status == HSA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(error_for(lib, call, status))
    }
}

impl Images {
    /// The table, from `hsa_system_get_major_extension_table`.
    ///
    /// # Errors
    /// The runtime's status when it has no image extension (or lacks the query).
    pub fn load(lib: &HsaLibrary) -> Result<Images, HsaError> {
        let call = "hsa_system_get_major_extension_table";
        let f = match &lib.api.hsa_system_get_major_extension_table {
            Ok(f) => *f,
            Err(_) => return Err(HsaError::missing_function(call, lib.name())),
        };
        let mut table = hsa_ext_images_1_pfn_t::default();
        // SAFETY: the table is a plain struct of optional function pointers of the size given.
        let status = unsafe {
            f(
                HSA_EXTENSION_IMAGES as u16,
                1,
                std::mem::size_of::<hsa_ext_images_1_pfn_t>(),
                (&mut table as *mut hsa_ext_images_1_pfn_t).cast::<c_void>(),
            )
        };
        check(lib, call, status)?;
        Ok(Images { table })
    }

    /// `hsa_ext_image_create_with_layout` with the linear layout: an image over `data` with
    /// the given pitches (0: the runtime's).
    ///
    /// # Safety
    /// `data` is memory of the agent holding the image as `desc` and the pitches say, alive
    /// until the image is destroyed.
    #[allow(clippy::too_many_arguments)] // the C function's, and the library
    pub unsafe fn create_linear(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        desc: &hsa_ext_image_descriptor_t,
        data: *const c_void,
        access: hsa_access_permission_t,
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<hsa_ext_image_t, HsaError> {
        let f = entry!(self, hsa_ext_image_create_with_layout);
        let mut image = hsa_ext_image_t { handle: 0 };
        // SAFETY: contract above; `desc` and `image` are valid for the call.
        let status = unsafe {
            f(
                agent,
                desc,
                data,
                access,
                HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR,
                row_pitch,
                slice_pitch,
                &mut image,
            )
        };
        check(lib, "hsa_ext_image_create_with_layout", status)?;
        Ok(image)
    }

    /// `hsa_ext_image_destroy`.
    ///
    /// # Safety
    /// `image` came from [`create_linear`](Self::create_linear) on `agent` and no kernel
    /// that uses it is running.
    pub unsafe fn destroy(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        image: hsa_ext_image_t,
    ) -> Result<(), HsaError> {
        let f = entry!(self, hsa_ext_image_destroy);
        // SAFETY: contract above.
        let status = unsafe { f(agent, image) };
        check(lib, "hsa_ext_image_destroy", status)
    }

    /// `hsa_ext_sampler_create`.
    ///
    /// # Errors
    /// The runtime's status (an unsupported combination of modes).
    pub fn create_sampler(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        desc: &hsa_ext_sampler_descriptor_t,
    ) -> Result<hsa_ext_sampler_t, HsaError> {
        let f = entry!(self, hsa_ext_sampler_create);
        let mut sampler = hsa_ext_sampler_t { handle: 0 };
        // SAFETY: `desc` and `sampler` are valid for the call; the agent is a plain handle
        // the runtime checks.
        let status = unsafe { f(agent, desc, &mut sampler) };
        check(lib, "hsa_ext_sampler_create", status)?;
        Ok(sampler)
    }

    /// `hsa_ext_sampler_destroy`.
    ///
    /// # Safety
    /// `sampler` came from [`create_sampler`](Self::create_sampler) on `agent` and no kernel
    /// that uses it is running.
    pub unsafe fn destroy_sampler(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        sampler: hsa_ext_sampler_t,
    ) -> Result<(), HsaError> {
        let f = entry!(self, hsa_ext_sampler_destroy);
        // SAFETY: contract above.
        let status = unsafe { f(agent, sampler) };
        check(lib, "hsa_ext_sampler_destroy", status)
    }

    /// `hsa_ext_image_import`: texels of `region` from linear memory at `src` (pitches 0:
    /// tightly packed).
    ///
    /// # Safety
    /// `src` holds the region at those pitches; `image` is live on `agent`.
    #[allow(clippy::too_many_arguments)] // the C function's, and the library
    pub unsafe fn import(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        src: *const c_void,
        row_pitch: usize,
        slice_pitch: usize,
        image: hsa_ext_image_t,
        region: &hsa_ext_image_region_t,
    ) -> Result<(), HsaError> {
        let f = entry!(self, hsa_ext_image_import);
        // SAFETY: contract above.
        let status = unsafe { f(agent, src, row_pitch, slice_pitch, image, region) };
        check(lib, "hsa_ext_image_import", status)
    }

    /// `hsa_ext_image_export`: texels of `region` into linear memory at `dst`.
    ///
    /// # Safety
    /// `dst` has room for the region at those pitches; `image` is live on `agent`.
    #[allow(clippy::too_many_arguments)] // the C function's, and the library
    pub unsafe fn export(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        image: hsa_ext_image_t,
        dst: *mut c_void,
        row_pitch: usize,
        slice_pitch: usize,
        region: &hsa_ext_image_region_t,
    ) -> Result<(), HsaError> {
        let f = entry!(self, hsa_ext_image_export);
        // SAFETY: contract above.
        let status = unsafe { f(agent, image, dst, row_pitch, slice_pitch, region) };
        check(lib, "hsa_ext_image_export", status)
    }

    /// `hsa_ext_image_copy`: `range` texels from `src` at `src_offset` to `dst` at
    /// `dst_offset`.
    ///
    /// # Safety
    /// Both images are live on `agent`.
    #[allow(clippy::too_many_arguments)] // the C function's, and the library
    pub unsafe fn copy(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        src: hsa_ext_image_t,
        src_offset: &hsa_dim3_t,
        dst: hsa_ext_image_t,
        dst_offset: &hsa_dim3_t,
        range: &hsa_dim3_t,
    ) -> Result<(), HsaError> {
        let f = entry!(self, hsa_ext_image_copy);
        // SAFETY: contract above.
        let status = unsafe { f(agent, src, src_offset, dst, dst_offset, range) };
        check(lib, "hsa_ext_image_copy", status)
    }

    /// `hsa_ext_image_clear`: every texel of `region` set to `value` (floats for float and
    /// normalised channel types, integers for the others).
    ///
    /// # Safety
    /// `image` is live on `agent`.
    pub unsafe fn clear(
        &self,
        lib: &HsaLibrary,
        agent: hsa_agent_t,
        image: hsa_ext_image_t,
        value: &[u32; 4],
        region: &hsa_ext_image_region_t,
    ) -> Result<(), HsaError> {
        let f = entry!(self, hsa_ext_image_clear);
        // SAFETY: contract above; `value` is four 32-bit values.
        let status = unsafe { f(agent, image, value.as_ptr().cast(), region) };
        check(lib, "hsa_ext_image_clear", status)
    }
}
