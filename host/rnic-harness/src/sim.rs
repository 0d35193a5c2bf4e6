//! Two simulated NICs of one world, joined by a named fabric, each with a
//! verbs context and its port address set.

use rnic_sim::{FabricConfig, SimDevice, SimWorld, WorldConfig};
use rnic_verbs::Context;

use crate::conn::{self, ConnOpts, End, EndOpts, PortAddr, DEFAULT_ADDRS};
use crate::{Error, Result};

pub use rnic_sim::PROFILE_NAMES;

/// Checks a fabric profile name; the error lists the valid ones.
pub fn fabric(name: &str) -> Result<FabricConfig> {
    FabricConfig::profile(name).map_err(|e| Error::Config(e.to_string()))
}

/// Two NICs of one world: `a` (NIC 0, the requester side of a workload)
/// and `b` (NIC 1), at [`DEFAULT_ADDRS`].
pub struct SimPair {
    pub world: SimWorld,
    pub a: Context<SimDevice>,
    pub b: Context<SimDevice>,
    pub addrs: [PortAddr; 2],
    /// The fabric profile's name.
    pub fabric: String,
    pub data_w: u32,
}

impl SimPair {
    /// Two NICs at `data_w` joined by the fabric profile `fabric`, every
    /// random choice from `seed`.
    pub fn new(data_w: u32, seed: u64, fabric_name: &str) -> Result<Self> {
        Self::with_world(
            WorldConfig {
                nics: 2,
                data_w,
                seed,
                fabric: fabric(fabric_name)?,
                ..WorldConfig::default()
            },
            fabric_name,
        )
    }

    /// Two NICs of a world built from `cfg` (`cfg.nics` is set to 2);
    /// `fabric_name` names `cfg.fabric` in reports.
    pub fn with_world(cfg: WorldConfig, fabric_name: &str) -> Result<Self> {
        if !cfg.knobs.widths().contains(&cfg.data_w) {
            return Err(Error::Config(format!(
                "--data-w {}: the simulator's {} model is built at {:?}",
                cfg.data_w,
                cfg.knobs,
                cfg.knobs.widths()
            )));
        }
        let data_w = cfg.data_w;
        let world = SimWorld::new(WorldConfig { nics: 2, ..cfg })?;
        let a = Context::open(world.device(0))?;
        let b = Context::open(world.device(1))?;
        a.set_port_addr(DEFAULT_ADDRS[0].mac, DEFAULT_ADDRS[0].ip)?;
        b.set_port_addr(DEFAULT_ADDRS[1].mac, DEFAULT_ADDRS[1].ip)?;
        Ok(Self {
            world,
            a,
            b,
            addrs: DEFAULT_ADDRS,
            fabric: fabric_name.to_string(),
            data_w,
        })
    }

    /// One connection from `a` to `b` with a registered buffer each side
    /// ([`conn::connect_ends`]).
    pub fn connect(&self, o: &ConnOpts, e: &EndOpts) -> Result<(End<SimDevice>, End<SimDevice>)> {
        conn::connect_ends(&self.a, self.addrs[0], &self.b, self.addrs[1], o, e)
    }
}
