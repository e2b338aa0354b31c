//! Walks over a skeleton's hierarchy: ancestors, common ancestors, the bones between two, and
//! the path from one bone to another.

use crate::model::Skeleton;

/// A skeleton's parents, children and depths.
pub(crate) struct Tree {
    pub(crate) parent: Vec<Option<usize>>,
    pub(crate) children: Vec<Vec<usize>>,
    pub(crate) depth: Vec<usize>,
}

impl Tree {
    pub(crate) fn new(skeleton: &Skeleton) -> Self {
        let n = skeleton.len();
        let parent: Vec<Option<usize>> = (0..n).map(|b| skeleton.parent(b)).collect();
        let mut children = vec![Vec::new(); n];
        let mut depth = vec![0; n];
        // Parents-first: a parent's depth is known before its children's.
        for b in 0..n {
            if let Some(p) = parent[b] {
                children[p].push(b);
                depth[b] = depth[p] + 1;
            }
        }
        Self {
            parent,
            children,
            depth,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }

    /// True when `a` is `b` or one of its ancestors.
    pub(crate) fn is_ancestor(&self, a: usize, b: usize) -> bool {
        self.ancestors(b).any(|x| x == a)
    }

    /// `from` and its ancestors, nearest first.
    pub(crate) fn ancestors(&self, from: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(from), |&b| self.parent[b])
    }

    /// `to` and its ancestors, from the skeleton's top down.
    pub(crate) fn top_down(&self, to: usize) -> Vec<usize> {
        let mut down: Vec<usize> = self.ancestors(to).collect();
        down.reverse();
        down
    }

    /// The deepest bone that is an ancestor of both (`None` across two roots).
    pub(crate) fn lca(&self, a: usize, b: usize) -> Option<usize> {
        let (mut a, mut b) = (a, b);
        while self.depth[a] > self.depth[b] {
            a = self.parent[a]?;
        }
        while self.depth[b] > self.depth[a] {
            b = self.parent[b]?;
        }
        while a != b {
            a = self.parent[a]?;
            b = self.parent[b]?;
        }
        Some(a)
    }

    /// The bones strictly between ancestor `top` and `bottom`, top-down (all of `bottom`'s
    /// ancestors when `top` is not one).
    pub(crate) fn between(&self, top: usize, bottom: usize) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .ancestors(bottom)
            .skip(1)
            .take_while(|&b| b != top)
            .collect();
        out.reverse();
        out
    }

    /// The path from `from` (exclusive) to `to` (inclusive), each bone with `true` where it is
    /// walked upwards (its local inverted): up from `from` to the common ancestor (or past the
    /// roots), then down.
    pub(crate) fn path(&self, from: usize, to: usize) -> Vec<(usize, bool)> {
        let lca = self.lca(from, to);
        let mut path: Vec<(usize, bool)> = self
            .ancestors(from)
            .take_while(|&x| Some(x) != lca)
            .map(|x| (x, true))
            .collect();
        let mut down: Vec<usize> = self.ancestors(to).take_while(|&x| Some(x) != lca).collect();
        down.reverse();
        path.extend(down.into_iter().map(|x| (x, false)));
        path
    }
}
