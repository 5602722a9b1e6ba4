//! Compute units as host CPUs: the software agent reports one compute unit per CPU the process
//! may run on, and a queue's CU mask (`hipExtStreamCreateWithCUMask`,
//! `hsa_amd_queue_cu_set_mask`) names which of them run its dispatches. Compute unit `k` is the
//! `k`-th CPU of the process's affinity set as it was when first asked; a dispatch restricted
//! to some units runs one worker thread per unit at most, each pinned to its unit's CPU.

use std::sync::OnceLock;

/// The CPUs the process may run on, in increasing order (compute unit `k` is the `k`-th);
/// empty where the host does not say.
pub fn host_cpus() -> &'static [usize] {
    static CPUS: OnceLock<Vec<usize>> = OnceLock::new();
    CPUS.get_or_init(affinity_set)
}

#[cfg(target_os = "linux")]
fn affinity_set() -> Vec<usize> {
    // SAFETY: `cpu_set_t` is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid set of the size passed, for the calling thread (0).
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

#[cfg(not(target_os = "linux"))]
fn affinity_set() -> Vec<usize> {
    Vec::new()
}

/// Pins the calling thread to compute unit `unit`'s CPU; false (and the thread unpinned) when
/// the unit names no CPU or the host refuses.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(unit: u32) -> bool {
    let Some(&cpu) = host_cpus().get(unit as usize) else {
        return false;
    };
    // SAFETY: `cpu_set_t` is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` came from the affinity set, so it is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: a valid set of the size passed, for the calling thread (0).
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
}

/// Pins nothing where the host has no affinity interface.
#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_unit: u32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_runs_on_its_units_cpu() {
        let cpus = host_cpus();
        assert!(!cpus.is_empty(), "Linux reports the process's CPUs");
        let last = (cpus.len() - 1) as u32;
        let on = std::thread::spawn(move || {
            assert!(pin_current_thread(last));
            // SAFETY: no arguments.
            unsafe { libc::sched_getcpu() }
        })
        .join()
        .expect("the pinned thread ran");
        assert_eq!(usize::try_from(on).ok(), Some(cpus[last as usize]));
        assert!(!std::thread::spawn(move || pin_current_thread(last + 1))
            .join()
            .expect("the thread ran"));
    }
}
