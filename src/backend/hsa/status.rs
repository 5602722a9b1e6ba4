//! HSA statuses as HIP error codes: what a HIP program should see when ROCr reports a failure.
//! The mapping follows the meaning of each status (HIP 5.2.3's `hipError_t` values); statuses
//! without a closer meaning map to `hipErrorUnknown`.

use hsa_sys::*;

/// The `hipError_t` value and name for an HSA status: queue failures (a kernel's memory
/// violation, an illegal instruction, a trap), allocation failures and bad arguments.
pub fn hip_error_for_status(status: hsa_status_t) -> (i32, &'static str) {
    match status {
        HSA_STATUS_SUCCESS => (0, "hipSuccess"),
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION | HSA_STATUS_ERROR_MEMORY_FAULT => {
            (700, "hipErrorIllegalAddress")
        }
        // HIP 5.2.3 has no code for an illegal instruction; a trap or an illegal instruction
        // ends the launch.
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION | HSA_STATUS_ERROR_EXCEPTION => {
            (719, "hipErrorLaunchFailure")
        }
        HSA_STATUS_ERROR_OUT_OF_RESOURCES | HSA_STATUS_ERROR_INVALID_ALLOCATION => {
            (2, "hipErrorOutOfMemory")
        }
        HSA_STATUS_ERROR_INVALID_ARGUMENT | HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => {
            (1, "hipErrorInvalidValue")
        }
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT | HSA_STATUS_ERROR_INVALID_ISA => {
            (200, "hipErrorInvalidImage")
        }
        HSA_STATUS_ERROR_INVALID_ISA_NAME => (209, "hipErrorNoBinaryForGpu"),
        HSA_STATUS_ERROR_VARIABLE_UNDEFINED | HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED => {
            (303, "hipErrorSharedObjectInitFailed")
        }
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME => (500, "hipErrorNotFound"),
        HSA_STATUS_ERROR_NOT_INITIALIZED => (3, "hipErrorNotInitialized"),
        HSA_STATUS_ERROR_INVALID_AGENT => (101, "hipErrorInvalidDevice"),
        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => (719, "hipErrorLaunchFailure"),
        _ => (999, "hipErrorUnknown"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_failures_map_to_launch_errors() {
        assert_eq!(
            hip_error_for_status(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION),
            (700, "hipErrorIllegalAddress")
        );
        assert_eq!(
            hip_error_for_status(HSA_STATUS_ERROR_EXCEPTION).1,
            "hipErrorLaunchFailure"
        );
        assert_eq!(hip_error_for_status(0x7777).1, "hipErrorUnknown");
    }
}
