//! Fuzzes the target layer's parsers and selection: target IDs, ISA names, bundle entry ids,
//! agents, ELF header fields, and `select` over arbitrary entry lists. Nothing may panic;
//! whatever parses must print canonically and parse back to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocload::target::{select, AgentIsa, ElfTarget, EntryId, Policy, TargetId};

fuzz_target!(|data: &[u8]| {
    if data.len() >= 6 {
        let flags = u32::from_le_bytes([data[2], data[3], data[4], data[5]]);
        if let Ok(t) = ElfTarget::from_header(data[0], data[1], flags) {
            let again = ElfTarget::from_header(data[0], t.abi_version(), t.e_flags()).unwrap();
            assert_eq!(again, t);
        }
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    if let Ok(id) = text.parse::<TargetId>() {
        let printed = id.to_string();
        let reparsed: TargetId = printed.parse().expect("canonical form parses");
        assert_eq!(reparsed, id);
        assert_eq!(
            TargetId::parse_isa_name(&id.isa_name()).expect("isa name parses"),
            id
        );
    }
    let _ = TargetId::parse_isa_name(text);
    if let Ok(e) = EntryId::parse(text) {
        assert_eq!(e.to_string(), text);
        let _ = (
            e.kind(),
            e.triple(),
            e.target_str(),
            e.is_spirv(),
            e.is_host(),
        );
    }

    // First line: the agent; the rest: a bundle's entry ids.
    let mut lines = text.split('\n');
    let agent = lines.next().and_then(|a| a.parse::<AgentIsa>().ok());
    let ids: Vec<&str> = lines.take(64).collect();
    let agent = agent.unwrap_or_else(|| "gfx1031".parse().expect("valid agent"));
    for policy in [Policy::Strict, Policy::Extended] {
        let s = select(&agent, &ids, policy);
        assert_eq!(s.candidates.len(), ids.len());
        assert_eq!(s.chosen, s.ranked.first().copied());
        let _ = s.no_match_error().to_string();
    }
});
