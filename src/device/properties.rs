//! The facts about a device that every API reports: HIP's device properties (each generation's
//! layout) and attributes, `hipMemGetInfo`, and the HSA agent information of the software HSA
//! library all read one [`DeviceProperties`] per device, so they cannot disagree. A backend
//! fills it once: the software agent from the host it runs on ([`HostFacts`]), ROCr's agents
//! from ROCr's agent and pool queries. Not for limits the runtime enforces on launches (those
//! live with the launch code and read these values).

use once_cell::sync::OnceCell;

/// What a device is and has. Sizes in bytes, clocks in kHz.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceProperties {
    /// The product name (`hipDeviceProp_t::name`, `HSA_AMD_AGENT_INFO_PRODUCT_NAME`).
    pub name: String,
    /// Compute units (on the software agent: the emulator's host threads).
    pub compute_units: u32,
    /// SIMDs per compute unit.
    pub simds_per_cu: u32,
    /// Waves a compute unit holds at once.
    pub max_waves_per_cu: u32,
    /// Shader clock.
    pub clock_khz: u32,
    /// Memory clock.
    pub memory_clock_khz: u32,
    /// Memory bus width in bits.
    pub memory_bus_width: u32,
    /// Cache sizes, L1 to L4 (0: none).
    pub caches: [u32; 4],
    /// Cache line size.
    pub cacheline: u32,
    /// Device memory.
    pub total_memory: u64,
    /// LDS one work-group may use.
    pub lds_per_workgroup: u32,
    /// LDS of one compute unit.
    pub lds_per_cu: u32,
    /// Work-items in one work-group at most.
    pub max_workgroup_size: u32,
    /// Whether device memory is the host's memory (an APU, or the software agent).
    pub integrated: bool,
}

impl DeviceProperties {
    /// The L2 cache's size (what HIP calls `l2CacheSize`).
    pub fn l2_cache(&self) -> u32 {
        self.caches[1]
    }
}

/// Device memory now: what is free and what there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Bytes that can still be allocated.
    pub free: u64,
    /// Bytes in all.
    pub total: u64,
}

/// What the host machine is, read once from `/proc` and `/sys` (the software agent reports
/// these as its own; the software HSA library's CPU agent too).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostFacts {
    /// The CPU's model name (`/proc/cpuinfo`), or `CPU`.
    pub cpu_name: String,
    /// The CPU's clock in kHz (`cpuinfo_max_freq`, else `cpu MHz`), or 1 GHz.
    pub clock_khz: u32,
    /// Cache sizes of cpu0, L1 data to L4 (0 where there is none or it cannot be read).
    pub caches: [u32; 4],
    /// Memory in bytes (`MemTotal`), or 16 GiB when `/proc/meminfo` cannot be read.
    pub total_memory: u64,
    /// Logical CPUs this process may use.
    pub cpus: u32,
}

impl HostFacts {
    /// The host's facts, read at the first call.
    pub fn get() -> &'static HostFacts {
        static FACTS: OnceCell<HostFacts> = OnceCell::new();
        FACTS.get_or_init(HostFacts::read)
    }

    fn read() -> HostFacts {
        let read = |p: &str| -> Option<String> {
            use std::io::Read;
            let mut text = String::new();
            // Bounded: these files are small, but /proc can be anything in a container.
            std::fs::File::open(p)
                .ok()?
                .take(256 * 1024)
                .read_to_string(&mut text)
                .ok()?;
            Some(text)
        };
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let cpu_field = |name: &str| {
            cpuinfo.lines().find_map(|l| {
                let (key, value) = l.split_once(':')?;
                (key.trim() == name).then(|| value.trim().to_owned())
            })
        };
        let cpu_name = cpu_field("model name")
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "CPU".to_owned());
        let clock_khz = read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .and_then(|t| t.trim().parse::<u32>().ok())
            .or_else(|| {
                let mhz: f64 = cpu_field("cpu MHz")?.parse().ok()?;
                Some((mhz * 1000.0) as u32)
            })
            .filter(|&k| k > 0)
            .unwrap_or(1_000_000);
        let mut caches = [0u32; 4];
        for index in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
            let Some(level) =
                read(&format!("{dir}/level")).and_then(|t| t.trim().parse::<usize>().ok())
            else {
                continue;
            };
            let kind = read(&format!("{dir}/type")).unwrap_or_default();
            if kind.trim() == "Instruction" || !(1..=4).contains(&level) {
                continue;
            }
            if let Some(size) = read(&format!("{dir}/size")).and_then(|t| parse_cache_size(&t)) {
                caches[level - 1] = size;
            }
        }
        if caches[1] == 0 {
            caches[1] = 4 << 20;
        }
        let total_memory = meminfo_field(&read("/proc/meminfo").unwrap_or_default(), "MemTotal")
            .unwrap_or(16 << 30);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        HostFacts {
            cpu_name,
            clock_khz,
            caches,
            total_memory,
            cpus,
        }
    }

    /// Memory the host can still give now (`MemAvailable`), at most `total_memory`.
    pub fn available_memory(&self) -> u64 {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| meminfo_field(&t, "MemAvailable"))
            .unwrap_or(self.total_memory / 2)
            .min(self.total_memory)
    }
}

/// `32K`, `1024K`, `8M` or a plain number of bytes.
fn parse_cache_size(text: &str) -> Option<u32> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u32 = n.parse().ok()?;
    match unit.trim() {
        "K" | "KB" | "KiB" => n.checked_mul(1024),
        "M" | "MB" | "MiB" => n.checked_mul(1 << 20),
        "" => Some(n),
        _ => None,
    }
}

/// A `/proc/meminfo` field in bytes.
fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        if key.trim() != name {
            return None;
        }
        let kib: u64 = value.trim().trim_end_matches("kB").trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_and_meminfo_parse() {
        assert_eq!(parse_cache_size("32K\n"), Some(32 * 1024));
        assert_eq!(parse_cache_size("8M"), Some(8 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("huge"), None);
        assert_eq!(parse_cache_size("99999999M"), None);
        let meminfo = "MemTotal:       24542768 kB\nMemFree: 1 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(meminfo_field(meminfo, "MemTotal"), Some(24542768 * 1024));
        assert_eq!(
            meminfo_field(meminfo, "MemAvailable"),
            Some(23000000 * 1024)
        );
        assert_eq!(meminfo_field(meminfo, "Mem"), None);
    }

    #[test]
    fn the_host_is_read_once_and_sensibly() {
        let a = HostFacts::get();
        assert!(std::ptr::eq(a, HostFacts::get()));
        assert!(a.total_memory > 0 && a.cpus > 0 && a.clock_khz > 0);
        assert!(a.available_memory() <= a.total_memory);
        assert!(a.caches[1] > 0);
    }
}
