//! Unit tests of the graph model (no device needed).

use std::sync::Arc;

use super::*;

fn host(tag: u64) -> NodeOp {
    NodeOp::Host(HostNode {
        call: Arc::new(|| {}),
        function: tag,
        data: 0,
    })
}

fn ids(nodes: &[Node]) -> Vec<NodeId> {
    nodes.iter().map(Node::id).collect()
}

#[test]
fn nodes_edges_and_queries() {
    let g = Graph::new();
    let a = g.add(NodeOp::Empty, &[]).unwrap();
    let b = g.add(host(1), std::slice::from_ref(&a)).unwrap();
    let c = g.add(host(2), std::slice::from_ref(&a)).unwrap();
    let d = g.add(NodeOp::Empty, &[b.clone(), c.clone()]).unwrap();
    assert_eq!(g.len(), 4);
    assert_eq!(ids(&g.root_nodes()), [a.id()]);
    assert_eq!(ids(&g.leaf_nodes()), [d.id()]);
    assert_eq!(ids(&g.dependencies(&d).unwrap()), [b.id(), c.id()]);
    assert_eq!(ids(&g.dependents(&a).unwrap()), [b.id(), c.id()]);
    assert_eq!(g.edges().len(), 4);
    assert_eq!(ids(&g.nodes()), [a.id(), b.id(), c.id(), d.id()]);
    assert_eq!(g.kind(&b).unwrap(), NodeKind::Host);

    // Refusals, each naming the node.
    assert_eq!(
        g.add(NodeOp::Empty, &[a.clone(), a.clone()]).unwrap_err(),
        GraphError::Duplicate { node: a.id() }
    );
    assert_eq!(
        g.add_edges(&[(a.clone(), a.clone())]).unwrap_err(),
        GraphError::SelfDependency { node: a.id() }
    );
    assert_eq!(
        g.add_edges(&[(a.clone(), b.clone())]).unwrap_err(),
        GraphError::EdgeExists {
            from: a.id(),
            to: b.id()
        }
    );
    assert_eq!(
        g.remove_edges(&[(b.clone(), c.clone())]).unwrap_err(),
        GraphError::NoSuchEdge {
            from: b.id(),
            to: c.id()
        }
    );
    let other = Graph::new();
    let o = other.add(NodeOp::Empty, &[]).unwrap();
    assert!(matches!(
        g.add(NodeOp::Empty, &[o]).unwrap_err(),
        GraphError::NotInGraph { .. }
    ));
    // All or none: a bad pair leaves the good one out.
    assert!(g
        .add_edges(&[(b.clone(), c.clone()), (c.clone(), c.clone())])
        .is_err());
    assert_eq!(g.edges().len(), 4);

    // Removing a node removes its edges.
    g.remove(&b).unwrap();
    assert_eq!(ids(&g.dependencies(&d).unwrap()), [c.id()]);
    assert_eq!(ids(&g.dependents(&a).unwrap()), [c.id()]);
    assert!(matches!(
        g.kind(&b).unwrap_err(),
        GraphError::NotInGraph { .. }
    ));
    assert!(b.live_graph().is_err());
}

#[test]
fn a_cycle_is_found_with_a_node_on_it() {
    let g = Graph::new();
    let a = g.add(NodeOp::Empty, &[]).unwrap();
    let b = g.add(NodeOp::Empty, std::slice::from_ref(&a)).unwrap();
    let c = g.add(NodeOp::Empty, std::slice::from_ref(&b)).unwrap();
    let tail = g.add(NodeOp::Empty, std::slice::from_ref(&c)).unwrap();
    g.add_edges(&[(c.clone(), b.clone())]).unwrap();
    match g.topological_order().unwrap_err() {
        GraphError::Cycle { node, .. } => assert!(node == b.id() || node == c.id(), "{node}"),
        e => panic!("{e}"),
    }
    // Queries still answer, in creation order.
    assert_eq!(ids(&g.nodes()), [a.id(), b.id(), c.id(), tail.id()]);
    g.remove_edges(&[(c, b)]).unwrap();
    assert_eq!(g.topological_order().unwrap().len(), 4);
}

#[test]
fn topological_order_prefers_creation_order() {
    let g = Graph::new();
    let late = g.add(NodeOp::Empty, &[]).unwrap();
    let early = g.add(NodeOp::Empty, &[]).unwrap();
    // `late` made first but depending on `early` now.
    g.add_edges(&[(early.clone(), late.clone())]).unwrap();
    assert_eq!(ids(&g.nodes()), [early.id(), late.id()]);
}

#[test]
fn clones_own_their_nodes_and_children_and_remember_their_origin() {
    let child = Graph::new();
    child.add(host(7), &[]).unwrap();
    let g = Graph::new();
    let a = g.add(host(1), &[]).unwrap();
    let c = g.add_child(&child, std::slice::from_ref(&a)).unwrap();
    // The node owns a clone of `child`.
    let NodeOp::Child(owned) = g.op(&c).unwrap() else {
        panic!("not a child node")
    };
    assert!(!owned.same(&child));
    assert_eq!(owned.len(), 1);

    let (clone, map) = g.deep_clone();
    assert_eq!(clone.len(), 2);
    let a2 = clone.find_in_clone(&a).unwrap();
    assert_eq!(map[&a.id()], a2.id());
    assert_ne!(a2.id(), a.id());
    // A clone of the clone still finds the first original's nodes.
    let (clone2, _) = clone.deep_clone();
    assert!(clone2.find_in_clone(&a).is_ok());
    // Child graphs are cloned too.
    let c2 = clone.find_in_clone(&c).unwrap();
    let NodeOp::Child(owned2) = clone.op(&c2).unwrap() else {
        panic!("not a child node")
    };
    assert!(!owned2.same(&owned));
    // A graph that is no clone finds nothing.
    assert!(matches!(
        g.find_in_clone(&a).unwrap_err(),
        GraphError::NotInClone { .. }
    ));
    assert_eq!(g.subgraphs().len(), 2);
}

#[test]
fn set_op_keeps_the_kind() {
    let g = Graph::new();
    let h = g.add(host(1), &[]).unwrap();
    assert!(matches!(
        g.set_op(&h, NodeOp::Empty).unwrap_err(),
        GraphError::WrongKind { .. }
    ));
    g.set_op(&h, host(2)).unwrap();
    let NodeOp::Host(x) = g.op(&h).unwrap() else {
        panic!()
    };
    assert_eq!(x.function, 2);
    // A linear copy may become a pitched one (HIP 5.5 numbers them as one kind).
    let lin = NodeOp::Copy(CopyNode {
        form: CopyForm::Linear {
            dst: 0x1000,
            src: 0x2000,
            len: 8,
        },
        kind: 3,
    });
    let c = g.add(lin, &[]).unwrap();
    let pitched = NodeOp::Copy(CopyNode {
        form: CopyForm::Pitched {
            src: PitchedPtr {
                ptr: 0x2000,
                pitch: 16,
                xsize: 8,
                ysize: 2,
            },
            src_pos: [0; 3],
            dst: PitchedPtr {
                ptr: 0x1000,
                pitch: 8,
                xsize: 8,
                ysize: 2,
            },
            dst_pos: [0; 3],
            extent: [8, 2, 1],
        },
        kind: 3,
    });
    g.set_op(&c, pitched).unwrap();
    assert_eq!(g.kind(&c).unwrap(), NodeKind::Memcpy);
}

#[test]
fn copy_rows_from_positions_and_pitches() {
    let c = CopyNode {
        form: CopyForm::Pitched {
            src: PitchedPtr {
                ptr: 0x10000,
                pitch: 64,
                xsize: 64,
                ysize: 4,
            },
            src_pos: [8, 1, 1],
            dst: PitchedPtr {
                ptr: 0x20000,
                pitch: 32,
                xsize: 32,
                ysize: 2,
            },
            dst_pos: [0; 3],
            extent: [16, 2, 2],
        },
        kind: 3,
    };
    let r = c.rows().unwrap();
    assert_eq!(r.src, 0x10000 + 64 * 4 + 64 + 8);
    assert_eq!((r.src_pitch, r.src_slice), (64, 256));
    assert_eq!((r.dst, r.dst_pitch, r.dst_slice), (0x20000, 32, 64));
    assert_eq!((r.width, r.height, r.depth), (16, 2, 2));
    assert_eq!(CopyRows::span(32, 64, 16, 2, 2), Some(64 + 32 + 16));
    // A row wider than its pitch, or positions that overflow, are refused.
    let mut bad = c;
    if let CopyForm::Pitched { extent, .. } = &mut bad.form {
        *extent = [100, 1, 1];
    }
    assert!(bad.rows().unwrap_err().contains("pitch"));
    let mut wraps = c;
    if let CopyForm::Pitched { src_pos, .. } = &mut wraps.form {
        *src_pos = [0, 0, u64::MAX / 8];
    }
    assert!(wraps.rows().is_err());
    assert_eq!(CopyRows::span(u64::MAX, u64::MAX, 1, 2, 2), None);
}

#[test]
fn kernel_argument_tables_point_into_their_own_copies() {
    let a = KernelArgs::values(vec![Box::from(&[1u8, 2][..]), Box::from(&[3u8][..])]);
    let b = a.clone();
    for args in [&a, &b] {
        let (values, packed) = args.explicit();
        assert!(packed.is_none());
        // SAFETY: the table holds one pointer per value, into `args`' own boxes.
        let table = unsafe { std::slice::from_raw_parts(args.table_address() as *const u64, 2) };
        assert_eq!(table[0], values[0].as_ptr() as u64);
        assert_eq!(table[1], values[1].as_ptr() as u64);
    }
    assert_ne!(a.table_address(), b.table_address());
    let p = KernelArgs::packed(Box::from(&[9u8; 12][..]));
    assert!(p.is_packed());
    // SAFETY: the `extra` table is five words.
    let t = unsafe { std::slice::from_raw_parts(p.table_address() as *const u64, 5) };
    assert_eq!((t[0], t[2], t[4]), (1, 2, 3));
    // SAFETY: the size word points at a live u64.
    assert_eq!(unsafe { *(t[3] as *const u64) }, 12);
    assert_eq!(t[1], p.explicit().1.unwrap().as_ptr() as u64);
}

#[test]
fn child_graphs_cannot_nest_without_bound() {
    // Nesting grows one level at a time through the graphs child nodes own, as a program can
    // through hipGraphChildGraphNodeGetGraph; every level is checked.
    let top = Graph::new();
    let mut at = top.clone();
    let mut levels = 0;
    loop {
        match at.add_child(&Graph::new(), &[]) {
            Ok(node) => {
                let NodeOp::Child(inner) = at.op(&node).unwrap() else {
                    panic!("not a child node")
                };
                at = inner;
                levels += 1;
            }
            Err(e) => {
                assert!(matches!(e, GraphError::TooLarge { .. }), "{e}");
                break;
            }
        }
        assert!(levels <= MAX_DEPTH, "nested past the limit");
    }
    assert_eq!(levels, MAX_DEPTH);
    assert_eq!(top.depth(), MAX_DEPTH);
    // The whole stack can be cloned and instantiated (no deep recursion beyond the limit).
    let (clone, _) = top.deep_clone();
    assert_eq!(clone.depth(), MAX_DEPTH);
    // A graph is not its own child; set_op checks nesting too.
    let g = Graph::new();
    assert!(g.add(NodeOp::Child(g.clone()), &[]).is_err());
    let c = g.add_child(&Graph::new(), &[]).unwrap();
    assert!(matches!(
        g.set_op(&c, NodeOp::Child(top.deep_clone().0)).unwrap_err(),
        GraphError::TooLarge { .. }
    ));
}
