//! OpenGL interop (`hipGLGetDevices`, `hipGraphicsGLRegister*`, `hipGraphics*`): none of
//! rocload's devices shares a GL context, so no GL object can be registered and no graphics
//! resource ever exists. Each call says so with the code HIP uses for that situation, after
//! checking its arguments as clr does; nothing reports success for work that did not happen.

use rocload_ffi::export;
use std::ffi::{c_int, c_uint, c_void};

use crate::*;

/// `hipErrorInvalidGraphicsContext`: no GL context this runtime can interoperate with.
const INVALID_GRAPHICS_CONTEXT: hipError_t = 219;

fn no_gl(what: &str) -> Failure {
    Failure::new(
        INVALID_GRAPHICS_CONTEXT,
        format!("{what}: no device of this runtime shares a GL context (no GL interop)"),
    )
}

/// A graphics resource handle: none can exist, so a non-NULL one is a stale or forged handle.
fn no_resource(resource: *mut c_void) -> Failure {
    if resource.is_null() {
        Failure::null("resource")
    } else {
        Failure::new(
            hipErrorInvalidHandle,
            format!("{resource:p} is not a graphics resource (none can be registered)"),
        )
    }
}

/// `hipError_t hipGLGetDevices(unsigned* pHipDeviceCount, int* pHipDevices, unsigned
/// hipDeviceCount, hipGLDeviceList deviceList)`: no device corresponds to a GL context; the
/// count is set to 0 and the call is hipErrorNoDevice.
#[export]
pub unsafe extern "C" fn hipGLGetDevices(
    count: *mut c_uint,
    _devices: *mut c_int,
    _capacity: c_uint,
    _list: c_int,
) -> hipError_t {
    call("hipGLGetDevices", || {
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(count, "pHipDeviceCount", 0) }?;
        Err(Failure::new(
            hipErrorNoDevice,
            "no device of this runtime corresponds to a GL context",
        ))
    })
}

/// `hipError_t hipGraphicsGLRegisterBuffer(hipGraphicsResource** resource, GLuint buffer,
/// unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipGraphicsGLRegisterBuffer(
    resource: *mut *mut c_void,
    _buffer: c_uint,
    _flags: c_uint,
) -> hipError_t {
    call("hipGraphicsGLRegisterBuffer", || {
        if resource.is_null() {
            return Err(Failure::null("resource"));
        }
        Err(no_gl("registering a GL buffer"))
    })
}

/// `hipError_t hipGraphicsGLRegisterImage(hipGraphicsResource** resource, GLuint image, GLenum
/// target, unsigned flags)`.
#[export]
pub unsafe extern "C" fn hipGraphicsGLRegisterImage(
    resource: *mut *mut c_void,
    _image: c_uint,
    _target: c_uint,
    _flags: c_uint,
) -> hipError_t {
    call("hipGraphicsGLRegisterImage", || {
        if resource.is_null() {
            return Err(Failure::null("resource"));
        }
        Err(no_gl("registering a GL image"))
    })
}

/// The resources of a map or unmap call: `count` handles, none of which can be a resource.
///
/// # Safety
/// `resources` holds `count` handles.
unsafe fn check_resources(count: c_int, resources: *mut *mut c_void) -> Result<(), Failure> {
    if count <= 0 || resources.is_null() {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("{count} resources at {resources:p}"),
        ));
    }
    // SAFETY: at least one handle by the caller's contract.
    Err(no_resource(unsafe { resources.read() }))
}

/// `hipError_t hipGraphicsMapResources(int count, hipGraphicsResource_t* resources,
/// hipStream_t stream)`.
#[export]
pub unsafe extern "C" fn hipGraphicsMapResources(
    count: c_int,
    resources: *mut *mut c_void,
    _stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract.
    call("hipGraphicsMapResources", || unsafe {
        check_resources(count, resources)
    })
}

/// `hipError_t hipGraphicsUnmapResources(int count, hipGraphicsResource_t* resources,
/// hipStream_t stream)`.
#[export]
pub unsafe extern "C" fn hipGraphicsUnmapResources(
    count: c_int,
    resources: *mut *mut c_void,
    _stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's contract.
    call("hipGraphicsUnmapResources", || unsafe {
        check_resources(count, resources)
    })
}

/// `hipError_t hipGraphicsSubResourceGetMappedArray(hipArray_t* array, hipGraphicsResource_t
/// resource, unsigned arrayIndex, unsigned mipLevel)`.
#[export]
pub unsafe extern "C" fn hipGraphicsSubResourceGetMappedArray(
    array: *mut *mut c_void,
    resource: *mut c_void,
    _index: c_uint,
    _level: c_uint,
) -> hipError_t {
    call("hipGraphicsSubResourceGetMappedArray", || {
        if array.is_null() {
            return Err(Failure::null("array"));
        }
        Err(no_resource(resource))
    })
}

/// `hipError_t hipGraphicsResourceGetMappedPointer(void** devPtr, size_t* size,
/// hipGraphicsResource_t resource)`.
#[export]
pub unsafe extern "C" fn hipGraphicsResourceGetMappedPointer(
    pointer: *mut *mut c_void,
    size: *mut usize,
    resource: *mut c_void,
) -> hipError_t {
    call("hipGraphicsResourceGetMappedPointer", || {
        if pointer.is_null() || size.is_null() {
            return Err(Failure::null("devPtr or size"));
        }
        Err(no_resource(resource))
    })
}

/// `hipError_t hipGraphicsUnregisterResource(hipGraphicsResource_t resource)`.
#[export]
pub unsafe extern "C" fn hipGraphicsUnregisterResource(resource: *mut c_void) -> hipError_t {
    call("hipGraphicsUnregisterResource", || {
        Err(no_resource(resource))
    })
}
