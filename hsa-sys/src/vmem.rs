//! ROCr's virtual memory API (`hsa_amd_vmem_*`, ROCr 6.0 and later; `_align` from 6.2), which
//! the 5.2.3 headers the generated bindings come from do not declare: its types, written from
//! the newer `hsa_ext_amd.h`, and checked calls resolved by name at run time. [`Vmem::load`]
//! returns `None` (with the missing names) for a library without it, such as Debian's 5.2.3.
//!
//! Nothing here has run against a real ROCr: the project's machines have no GPU and its ROCr is
//! 5.2.3. The signatures and enum values were checked against ROCr's `hsa_ext_amd.h` (6.x).

use std::ffi::{c_int, c_void};

use crate::bindings::{hsa_access_permission_t, hsa_agent_t, hsa_amd_memory_pool_t, hsa_status_t};
use crate::error::HsaError;
use crate::result::error_for;
use crate::HsaLibrary;

/// `hsa_amd_vmem_alloc_handle_t`: physical memory made for mapping.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct hsa_amd_vmem_alloc_handle_t {
    /// Opaque.
    pub handle: u64,
}

/// `hsa_amd_memory_access_desc_t`: one agent's access to a mapped range.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hsa_amd_memory_access_desc_t {
    /// `HSA_ACCESS_PERMISSION_*`.
    pub permissions: hsa_access_permission_t,
    /// The agent.
    pub agent_handle: hsa_agent_t,
}

/// `HSA_ACCESS_PERMISSION_NONE` (the 5.2.3 headers name only RO, WO and RW).
pub const HSA_ACCESS_PERMISSION_NONE: hsa_access_permission_t = 0;
/// `MEMORY_TYPE_NONE` of `hsa_amd_memory_type_t`.
pub const MEMORY_TYPE_NONE: u32 = 0;
/// `MEMORY_TYPE_PINNED` of `hsa_amd_memory_type_t`.
pub const MEMORY_TYPE_PINNED: u32 = 1;
/// `hsa_amd_memory_type_t`.
pub type hsa_amd_memory_type_t = u32;

/// System attributes ROCr 6.x added after `HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT`
/// (`hsa.h` of rocm-6.2.0; 5.2.3 answers them `HSA_STATUS_ERROR_INVALID_ARGUMENT`).
pub const HSA_AMD_SYSTEM_INFO_MWAITX_ENABLED: u32 = 0x203;
/// Whether the driver can export dma-bufs (bool).
pub const HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED: u32 = 0x204;
/// Whether the virtual memory API works (bool): `hsa_amd_vmem_*` fail without it.
pub const HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED: u32 = 0x205;
/// Whether XNACK is on (bool).
pub const HSA_AMD_SYSTEM_INFO_XNACK_ENABLED: u32 = 0x206;
/// `HSA_AMD_INTERFACE_VERSION_MAJOR` (u16).
pub const HSA_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR: u32 = 0x207;
/// `HSA_AMD_INTERFACE_VERSION_MINOR` (u16).
pub const HSA_AMD_SYSTEM_INFO_EXT_VERSION_MINOR: u32 = 0x208;

type Reserve = unsafe extern "C" fn(*mut *mut c_void, usize, u64, u64) -> hsa_status_t;
type ReserveAlign = unsafe extern "C" fn(*mut *mut c_void, usize, u64, u64, u64) -> hsa_status_t;
type Free = unsafe extern "C" fn(*mut c_void, usize) -> hsa_status_t;
type HandleCreate = unsafe extern "C" fn(
    hsa_amd_memory_pool_t,
    usize,
    u32,
    u64,
    *mut hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t;
type HandleRelease = unsafe extern "C" fn(hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;
type Map = unsafe extern "C" fn(
    *mut c_void,
    usize,
    usize,
    hsa_amd_vmem_alloc_handle_t,
    u64,
) -> hsa_status_t;
type Unmap = unsafe extern "C" fn(*mut c_void, usize) -> hsa_status_t;
type SetAccess = unsafe extern "C" fn(
    *mut c_void,
    usize,
    *const hsa_amd_memory_access_desc_t,
    usize,
) -> hsa_status_t;
type Export = unsafe extern "C" fn(*mut c_int, hsa_amd_vmem_alloc_handle_t, u64) -> hsa_status_t;
type Import = unsafe extern "C" fn(c_int, *mut hsa_amd_vmem_alloc_handle_t) -> hsa_status_t;

/// The virtual memory functions of a library that has them.
#[derive(Debug, Clone, Copy)]
pub struct Vmem {
    reserve: Reserve,
    reserve_align: Option<ReserveAlign>,
    free: Free,
    handle_create: HandleCreate,
    handle_release: HandleRelease,
    map: Map,
    unmap: Unmap,
    set_access: SetAccess,
    export: Export,
    import: Import,
}

fn check(lib: &HsaLibrary, call: &'static str, status: hsa_status_t) -> Result<(), HsaError> {
    if status == crate::bindings::HSA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(error_for(lib, call, status))
    }
}

impl Vmem {
    /// The functions, when `lib` exports every one (`_align` is optional); else the names it
    /// lacks.
    ///
    /// # Errors
    /// The names of the missing functions.
    pub fn load(lib: &HsaLibrary) -> Result<Vmem, Vec<&'static str>> {
        let mut missing = Vec::new();
        macro_rules! get {
            ($name:literal, $ty:ty) => {{
                // SAFETY: the type is the function's signature in ROCr's hsa_ext_amd.h (6.x).
                let f: Option<$ty> = unsafe { lib.function::<$ty>($name) };
                if f.is_none() {
                    missing.push($name);
                }
                f
            }};
        }
        let reserve = get!("hsa_amd_vmem_address_reserve", Reserve);
        let free = get!("hsa_amd_vmem_address_free", Free);
        let handle_create = get!("hsa_amd_vmem_handle_create", HandleCreate);
        let handle_release = get!("hsa_amd_vmem_handle_release", HandleRelease);
        let map = get!("hsa_amd_vmem_map", Map);
        let unmap = get!("hsa_amd_vmem_unmap", Unmap);
        let set_access = get!("hsa_amd_vmem_set_access", SetAccess);
        let export = get!("hsa_amd_vmem_export_shareable_handle", Export);
        let import = get!("hsa_amd_vmem_import_shareable_handle", Import);
        // SAFETY: as above.
        let reserve_align =
            unsafe { lib.function::<ReserveAlign>("hsa_amd_vmem_address_reserve_align") };
        match (
            reserve,
            free,
            handle_create,
            handle_release,
            map,
            unmap,
            set_access,
            export,
            import,
        ) {
            (
                Some(reserve),
                Some(free),
                Some(handle_create),
                Some(handle_release),
                Some(map),
                Some(unmap),
                Some(set_access),
                Some(export),
                Some(import),
            ) => Ok(Vmem {
                reserve,
                reserve_align,
                free,
                handle_create,
                handle_release,
                map,
                unmap,
                set_access,
                export,
                import,
            }),
            _ => Err(missing),
        }
    }

    /// `hsa_amd_vmem_address_reserve_align` (or, before 6.2, `_reserve`, whose result the
    /// caller checks for alignment): `size` bytes at `address` if free, else anywhere.
    ///
    /// # Safety
    /// The range is released with [`address_free`](Self::address_free).
    pub unsafe fn address_reserve(
        &self,
        lib: &HsaLibrary,
        size: usize,
        address: u64,
        alignment: u64,
    ) -> Result<*mut c_void, HsaError> {
        let mut va: *mut c_void = std::ptr::null_mut();
        let status = match self.reserve_align {
            // SAFETY: `va` is a valid out-parameter; flags must be 0.
            Some(f) => unsafe { f(&mut va, size, address, alignment, 0) },
            // SAFETY: as above.
            None => unsafe { (self.reserve)(&mut va, size, address, 0) },
        };
        check(lib, "hsa_amd_vmem_address_reserve", status)?;
        Ok(va)
    }

    /// `hsa_amd_vmem_address_free`.
    ///
    /// # Safety
    /// `va` and `size` are a reservation's, with no mapping left.
    pub unsafe fn address_free(
        &self,
        lib: &HsaLibrary,
        va: *mut c_void,
        size: usize,
    ) -> Result<(), HsaError> {
        // SAFETY: contract above.
        check(lib, "hsa_amd_vmem_address_free", unsafe {
            (self.free)(va, size)
        })
    }

    /// `hsa_amd_vmem_handle_create` of pinned memory from `pool`.
    ///
    /// # Safety
    /// `pool` came from this runtime; the handle is released with
    /// [`handle_release`](Self::handle_release).
    pub unsafe fn handle_create(
        &self,
        lib: &HsaLibrary,
        pool: hsa_amd_memory_pool_t,
        size: usize,
    ) -> Result<hsa_amd_vmem_alloc_handle_t, HsaError> {
        let mut handle = hsa_amd_vmem_alloc_handle_t::default();
        // SAFETY: contract above; `handle` is a valid out-parameter.
        let status =
            unsafe { (self.handle_create)(pool, size, MEMORY_TYPE_PINNED, 0, &mut handle) };
        check(lib, "hsa_amd_vmem_handle_create", status)?;
        Ok(handle)
    }

    /// `hsa_amd_vmem_handle_release`.
    ///
    /// # Safety
    /// `handle` came from this runtime and is not used afterwards.
    pub unsafe fn handle_release(
        &self,
        lib: &HsaLibrary,
        handle: hsa_amd_vmem_alloc_handle_t,
    ) -> Result<(), HsaError> {
        // SAFETY: contract above.
        check(lib, "hsa_amd_vmem_handle_release", unsafe {
            (self.handle_release)(handle)
        })
    }

    /// `hsa_amd_vmem_map`.
    ///
    /// # Safety
    /// The range lies in a reservation and over no mapping; `handle` is live.
    pub unsafe fn map(
        &self,
        lib: &HsaLibrary,
        va: *mut c_void,
        size: usize,
        offset: usize,
        handle: hsa_amd_vmem_alloc_handle_t,
    ) -> Result<(), HsaError> {
        // SAFETY: contract above.
        check(lib, "hsa_amd_vmem_map", unsafe {
            (self.map)(va, size, offset, handle, 0)
        })
    }

    /// `hsa_amd_vmem_unmap`.
    ///
    /// # Safety
    /// `va` and `size` are a mapping's, which nothing touches any more.
    pub unsafe fn unmap(
        &self,
        lib: &HsaLibrary,
        va: *mut c_void,
        size: usize,
    ) -> Result<(), HsaError> {
        // SAFETY: contract above.
        check(lib, "hsa_amd_vmem_unmap", unsafe { (self.unmap)(va, size) })
    }

    /// `hsa_amd_vmem_set_access` for one agent.
    ///
    /// # Safety
    /// `va` and `size` are whole mappings; the agent came from this runtime.
    pub unsafe fn set_access(
        &self,
        lib: &HsaLibrary,
        va: *mut c_void,
        size: usize,
        agent: hsa_agent_t,
        permissions: hsa_access_permission_t,
    ) -> Result<(), HsaError> {
        let desc = hsa_amd_memory_access_desc_t {
            permissions,
            agent_handle: agent,
        };
        // SAFETY: contract above; one descriptor.
        check(lib, "hsa_amd_vmem_set_access", unsafe {
            (self.set_access)(va, size, &desc, 1)
        })
    }

    /// `hsa_amd_vmem_export_shareable_handle`: a dma-buf descriptor the caller owns.
    ///
    /// # Safety
    /// `handle` is live.
    pub unsafe fn export(
        &self,
        lib: &HsaLibrary,
        handle: hsa_amd_vmem_alloc_handle_t,
    ) -> Result<c_int, HsaError> {
        let mut fd: c_int = -1;
        // SAFETY: contract above; `fd` is a valid out-parameter.
        check(lib, "hsa_amd_vmem_export_shareable_handle", unsafe {
            (self.export)(&mut fd, handle, 0)
        })?;
        Ok(fd)
    }

    /// `hsa_amd_vmem_import_shareable_handle` of a dma-buf descriptor (the caller keeps it).
    ///
    /// # Safety
    /// The result is released with [`handle_release`](Self::handle_release).
    pub unsafe fn import(
        &self,
        lib: &HsaLibrary,
        fd: c_int,
    ) -> Result<hsa_amd_vmem_alloc_handle_t, HsaError> {
        let mut handle = hsa_amd_vmem_alloc_handle_t::default();
        // SAFETY: `handle` is a valid out-parameter; a bad descriptor is the runtime's error.
        check(lib, "hsa_amd_vmem_import_shareable_handle", unsafe {
            (self.import)(fd, &mut handle)
        })?;
        Ok(handle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Debian's ROCr 5.2.3 has no virtual memory API: every name is reported missing.
    #[test]
    fn rocr_5_2_3_has_no_vmem_api() {
        let lib = match HsaLibrary::load_from("libhsa-runtime64.so.1") {
            Ok(lib) => lib,
            Err(e) if std::env::var_os("CI").is_some() => {
                panic!("CI is set but the HSA runtime is missing: {e}")
            }
            Err(e) => {
                eprintln!("skipped: HSA runtime not installed ({e})");
                return;
            }
        };
        let missing = Vmem::load(&lib).unwrap_err();
        assert_eq!(missing.len(), 9, "{missing:?}");
        assert!(missing.contains(&"hsa_amd_vmem_map"));
    }
}
