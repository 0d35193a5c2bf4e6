//! The record window (BAR0 `qp_block.qp_rec_*`): a QP's whole state, every
//! per-QP record of the core, as `id.qp_rec_words` 64-bit words, the layout
//! the QP context table in host memory will hold (DESIGN.md section 6).
//!
//! The NIC holds MMIO while a word command runs, so a read of
//! `qp_rec_rdata` after a read command returns that command's word. A
//! record is written whole and in word order: the core keeps records wider
//! than a word and writes one when its last word arrives.

use rnic_device::Device;

use crate::{DriverError, Nic, Result};

const OP_READ: u8 = 1;
const OP_WRITE: u8 = 2;

impl<D: Device> Nic<D> {
    /// Words of one QP's record (0: a build without the record port).
    pub fn qp_record_words(&self) -> u32 {
        self.id().qp_rec_words
    }

    pub(crate) fn check_record_qp(&self, qpn: u16) -> Result<usize> {
        let words = self.qp_record_words();
        if words == 0 {
            return Err(DriverError::InvalidArg(
                "this build has no record port (id.qp_rec_words is 0)".into(),
            ));
        }
        if u32::from(qpn) >= self.id().num_queues {
            return Err(DriverError::InvalidArg(format!(
                "QP {qpn} is beyond the build's {} QPs",
                self.id().num_queues
            )));
        }
        Ok(words as usize)
    }

    /// Reads QP `qpn`'s record, word 0 first (`qpn` the QP's slot, which
    /// is not its number on the wire in a build with a QP directory). The QP may be busy: the words
    /// are read one at a time, so a record that changes meanwhile is read
    /// as the parts of two versions.
    pub fn read_qp_record(&self, qpn: u16) -> Result<Vec<u64>> {
        let words = self.check_record_qp(qpn)?;
        let io = self.io();
        let qp = io.csr().qp();
        qp.qp_sel().try_write(|r| r.set_qpn(qpn))?;
        let mut out = Vec::with_capacity(words);
        for w in 0..words {
            qp.qp_rec_cmd().try_write(|r| {
                r.set_word(w as u8);
                r.set_op(OP_READ);
            })?;
            let lo = qp.qp_rec_rdata_lo().try_read()?.value();
            let hi = qp.qp_rec_rdata_hi().try_read()?.value();
            out.push(u64::from(hi) << 32 | u64::from(lo));
        }
        Ok(out)
    }

    /// Writes `words` as QP `qpn`'s record, word 0 first. Only for a QP
    /// with nothing in flight: the core's modules own a busy QP's records.
    pub fn write_qp_record(&self, qpn: u16, words: &[u64]) -> Result<()> {
        let n = self.check_record_qp(qpn)?;
        if words.len() != n {
            return Err(DriverError::InvalidArg(format!(
                "a QP record is {n} words, not {}",
                words.len()
            )));
        }
        let io = self.io();
        let qp = io.csr().qp();
        qp.qp_sel().try_write(|r| r.set_qpn(qpn))?;
        for (w, &v) in words.iter().enumerate() {
            qp.qp_rec_wdata_lo().try_write(|r| r.set_data(v as u32))?;
            qp.qp_rec_wdata_hi()
                .try_write(|r| r.set_data((v >> 32) as u32))?;
            qp.qp_rec_cmd().try_write(|r| {
                r.set_word(w as u8);
                r.set_op(OP_WRITE);
            })?;
        }
        Ok(())
    }
}
