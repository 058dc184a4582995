//! The network as a search [`Evaluator`], and a position cache in front of any evaluator.

use std::path::Path;

use super::network::Network;
use super::{DeviceChoice, Precision};
use crate::game::{Position, Variant, ACTIONS};
use crate::search::Evaluator;

/// A [`Network`] judging batches for search: evaluation mode (batch norm on running
/// statistics), no gradients, one forward pass per batch, results copied off the device once.
/// It encodes each batch into one reused input buffer.
#[derive(Debug)]
pub struct NetEvaluator {
    net: Network,
    features: Vec<f32>,
}

impl NetEvaluator {
    pub fn new(net: Network) -> NetEvaluator {
        NetEvaluator {
            net,
            features: Vec::new(),
        }
    }

    /// Loads a checkpoint (see [`Network::load`]) onto the chosen device.
    pub fn load(path: &Path, device: DeviceChoice) -> anyhow::Result<NetEvaluator> {
        Ok(NetEvaluator::new(Network::load(path, device.resolve()?)?))
    }

    /// [`Self::load`], refusing a checkpoint trained for another variant.
    pub fn load_for(
        path: &Path,
        variant: Variant,
        device: DeviceChoice,
    ) -> anyhow::Result<NetEvaluator> {
        Ok(NetEvaluator::new(Network::load_for(
            path,
            variant,
            device.resolve()?,
        )?))
    }

    /// This evaluator judging in `precision` (see [`Precision`]; its network becomes an
    /// inference-only copy).
    pub fn with_precision(mut self, precision: Precision) -> anyhow::Result<NetEvaluator> {
        self.net.set_inference_precision(precision)?;
        Ok(self)
    }

    pub fn network(&self) -> &Network {
        &self.net
    }
}

impl Evaluator for NetEvaluator {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        let n = crate::search::evaluator::batch_size(positions, masks, policy, values)?;
        let encoding = self.net.encoding();
        self.features.resize(n * encoding.features(), 0.0);
        for (pos, f) in positions
            .iter()
            .zip(self.features.chunks_exact_mut(encoding.features()))
        {
            encoding.encode(pos, f);
        }
        super::flush_denormals();
        let out = self.net.infer(&self.features, masks)?;
        for ((row, p), v) in out
            .chunks_exact(ACTIONS + 1)
            .zip(policy.chunks_exact_mut(ACTIONS))
            .zip(values)
        {
            p.copy_from_slice(&row[..ACTIONS]);
            *v = row[ACTIONS];
        }
        Ok(())
    }

    fn name(&self) -> String {
        let l = self.net.lineage();
        let precision = match self.net.precision() {
            Precision::F32 => String::new(),
            p => format!(" {p}"),
        };
        format!(
            "net {} {}{precision} step {}",
            self.net.variant(),
            self.net.config().short_name(),
            l.step
        )
    }
}

/// One slot of the cache table.
#[derive(Clone)]
struct Entry {
    key: u64,
    value: f32,
    policy: [f32; ACTIONS],
}

/// A fixed-size cache of evaluations in front of any evaluator, keyed by
/// [`Position::hash64`]: the same position reached by another move order, again after tree
/// reuse, or in the next search of a game is judged once. Direct-mapped: a new result
/// overwrites the slot its key maps to, so memory is fixed (about 270 bytes x capacity) and old
/// entries age out by collision. Misses of a batch go to the inner evaluator as one smaller
/// batch. Two positions share a result only if their 64-bit keys collide (~1e-7 after 1e6
/// distinct positions). A deterministic inner evaluator gives exactly the uncached answers.
pub struct CachedEvaluator<E> {
    inner: E,
    table: Vec<Option<Entry>>,
    hits: u64,
    lookups: u64,
    // Scratch buffers for the misses, reused between batches.
    miss_positions: Vec<Position>,
    miss_masks: Vec<u64>,
    miss_policy: Vec<f32>,
    miss_values: Vec<f32>,
    misses: Vec<(usize, u64)>,
}

impl<E: Evaluator> CachedEvaluator<E> {
    /// `capacity` slots (at least 1).
    pub fn new(inner: E, capacity: usize) -> CachedEvaluator<E> {
        CachedEvaluator {
            inner,
            table: vec![None; capacity.max(1)],
            hits: 0,
            lookups: 0,
            miss_positions: Vec::new(),
            miss_masks: Vec::new(),
            miss_policy: Vec::new(),
            miss_values: Vec::new(),
            misses: Vec::new(),
        }
    }

    /// Fraction of lookups answered from the cache so far.
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            0.0
        } else {
            self.hits as f64 / self.lookups as f64
        }
    }

    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// Forgets all entries (e.g. after the inner network's weights changed).
    pub fn clear(&mut self) {
        self.table.iter_mut().for_each(|e| *e = None);
    }
}

impl<E: Evaluator> Evaluator for CachedEvaluator<E> {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        let n = crate::search::evaluator::batch_size(positions, masks, policy, values)?;
        let slots = self.table.len() as u64;
        self.miss_positions.clear();
        self.miss_masks.clear();
        self.misses.clear();
        for i in 0..n {
            let key = positions[i].hash64();
            self.lookups += 1;
            match &self.table[(key % slots) as usize] {
                Some(e) if e.key == key => {
                    self.hits += 1;
                    policy[i * ACTIONS..(i + 1) * ACTIONS].copy_from_slice(&e.policy);
                    values[i] = e.value;
                }
                _ => {
                    self.miss_positions.push(positions[i]);
                    self.miss_masks.push(masks[i]);
                    self.misses.push((i, key));
                }
            }
        }
        if self.misses.is_empty() {
            return Ok(());
        }
        let m = self.misses.len();
        self.miss_policy.resize(m * ACTIONS, 0.0);
        self.miss_values.resize(m, 0.0);
        self.inner.evaluate(
            &self.miss_positions,
            &self.miss_masks,
            &mut self.miss_policy,
            &mut self.miss_values,
        )?;
        for (j, &(i, key)) in self.misses.iter().enumerate() {
            let p = &self.miss_policy[j * ACTIONS..(j + 1) * ACTIONS];
            policy[i * ACTIONS..(i + 1) * ACTIONS].copy_from_slice(p);
            values[i] = self.miss_values[j];
            let mut entry = Entry {
                key,
                value: values[i],
                policy: [0.0; ACTIONS],
            };
            entry.policy.copy_from_slice(p);
            self.table[(key % slots) as usize] = Some(entry);
        }
        Ok(())
    }

    fn name(&self) -> String {
        format!("{} (cached)", self.inner.name())
    }
}
