//! The SPI NOR model on its own, driven pin by pin by a bit-banging master
//! (mode 0, single lane, one SCK half period per cycle).

use rnic_sim::{FlashOpKind, FlashTiming, PortHook, PortsIn, PortsOut, SpiFlash, SpiFlashConfig};

struct Master {
    flash: SpiFlash,
    cycle: u64,
    inp: PortsIn,
    out: PortsOut,
}

impl Master {
    fn new(cfg: SpiFlashConfig) -> Self {
        let out = PortsOut {
            flash_cs_n: 1,
            flash_io_oe: 0b1101,
            flash_io_o: 0b1100,
            ..Default::default()
        };
        Self {
            flash: SpiFlash::new(cfg).unwrap(),
            cycle: 0,
            inp: PortsIn::default(),
            out,
        }
    }

    fn tick(&mut self) {
        self.flash.drive(self.cycle, false, &mut self.inp);
        self.flash.sample(self.cycle, &self.inp, &self.out);
        self.cycle += 1;
    }

    /// One transaction: send `tx`, then read `rx` bytes (single lane).
    fn xfer(&mut self, tx: &[u8], rx: usize) -> Vec<u8> {
        self.out.flash_cs_n = 0;
        self.tick();
        for &b in tx {
            for i in (0..8).rev() {
                self.out.flash_io_o = (self.out.flash_io_o & !1) | ((b >> i) & 1);
                self.out.flash_sck = 0;
                self.tick();
                self.out.flash_sck = 1;
                self.tick();
            }
        }
        let mut got = Vec::new();
        for _ in 0..rx {
            let mut v = 0u8;
            for _ in 0..8 {
                self.out.flash_sck = 0;
                self.tick();
                self.tick();
                self.out.flash_sck = 1;
                self.tick();
                v = (v << 1) | ((self.inp.flash_io_i >> 1) & 1);
            }
            got.push(v);
        }
        self.out.flash_sck = 0;
        self.tick();
        self.out.flash_cs_n = 1;
        self.tick();
        self.tick();
        got
    }

    fn wait_ready(&mut self) -> u32 {
        let mut polls = 0;
        while self.xfer(&[0x05], 1)[0] & 1 != 0 {
            polls += 1;
            assert!(polls < 100_000, "never ready");
        }
        polls
    }
}

fn cfg() -> SpiFlashConfig {
    let mut c = SpiFlashConfig::for_board("sim").unwrap();
    c.timing = FlashTiming {
        page_program: 500,
        sector_erase: 2000,
        block_erase: 5000,
    };
    c
}

#[test]
fn id_program_erase_and_the_write_enable_latch() {
    let mut m = Master::new(cfg());
    assert_eq!(m.xfer(&[0x9F], 3), vec![0x20, 0xBA, 0x19]);
    // Program without WREN: refused (and recorded).
    m.xfer(&[0x12, 0x01, 0x00, 0x00, 0x10, 0x55, 0x66], 0);
    assert_eq!(m.flash.contents()[0x0100_0010], 0xFF);
    assert!(m.flash.errors().iter().any(|e| e.1.contains("without WEL")));
    m.xfer(&[0x06], 0);
    assert_eq!(m.xfer(&[0x05], 1)[0] & 2, 2, "WEL set");
    m.xfer(&[0x12, 0x01, 0x00, 0x00, 0xFF, 0x55, 0x66], 0);
    assert!(m.wait_ready() > 0, "program takes time");
    // Programming wraps within the page and only clears bits.
    assert_eq!(m.flash.contents()[0x0100_00FF], 0x55);
    assert_eq!(m.flash.contents()[0x0100_0000], 0x66);
    assert_eq!(m.xfer(&[0x13, 0x01, 0x00, 0x00, 0xFF], 2), vec![0x55, 0xFF]);
    m.xfer(&[0x06], 0);
    m.xfer(&[0x12, 0x01, 0x00, 0x00, 0xFF, 0xF0], 0);
    m.wait_ready();
    assert_eq!(m.flash.contents()[0x0100_00FF], 0x50);
    // Erase needs WREN again (cleared after the program).
    assert_eq!(m.xfer(&[0x05], 1)[0] & 2, 0);
    m.xfer(&[0x06], 0);
    m.xfer(&[0x21, 0x01, 0x00, 0x00, 0x00], 0);
    m.wait_ready();
    assert!(m.flash.contents()[0x0100_0000..0x0100_1000]
        .iter()
        .all(|&b| b == 0xFF));
    let ops = m.flash.ops();
    assert_eq!(
        ops.iter()
            .filter(|o| o.kind == FlashOpKind::Erase && o.completed)
            .count(),
        1
    );
}

#[test]
fn three_and_four_byte_addressing() {
    let mut m = Master::new(cfg());
    m.flash.contents_mut()[0x0012_3456] = 0xA1;
    m.flash.contents_mut()[0x0112_3456] = 0xB2;
    // 3-byte READ reaches only the low 16 MiB; EN4B makes it take 4 bytes.
    assert_eq!(m.xfer(&[0x03, 0x12, 0x34, 0x56], 1), vec![0xA1]);
    m.xfer(&[0xB7], 0);
    assert_eq!(m.xfer(&[0x03, 0x01, 0x12, 0x34, 0x56], 1), vec![0xB2]);
    m.xfer(&[0xE9], 0);
    assert_eq!(m.xfer(&[0x13, 0x01, 0x12, 0x34, 0x56], 1), vec![0xB2]);
    assert!(m.flash.errors().is_empty(), "{:?}", m.flash.errors());
}

#[test]
fn contention_and_commands_while_busy_are_reported() {
    let mut m = Master::new(cfg());
    // Drive IO1 while the flash answers a status read.
    m.out.flash_io_oe = 0b1111;
    m.xfer(&[0x05], 1);
    assert!(m
        .flash
        .errors()
        .iter()
        .any(|e| e.1.contains("bus contention")));
    m.out.flash_io_oe = 0b1101;
    m.xfer(&[0x06], 0);
    m.xfer(&[0xDC, 0x00, 0x00, 0x00, 0x00], 0);
    m.xfer(&[0x9F], 3);
    assert!(m.flash.errors().iter().any(|e| e.1.contains("while busy")));
}

#[test]
fn power_cut_mid_erase_leaves_part_of_it_and_a_dead_chip() {
    let mut c = cfg();
    c.power_cut_at = Some(3000);
    let mut m = Master::new(c);
    m.flash.contents_mut()[..65536].fill(0);
    m.xfer(&[0x06], 0);
    m.xfer(&[0xDC, 0x00, 0x00, 0x00, 0x00], 0);
    while m.cycle < 3100 {
        m.tick();
    }
    assert_eq!(m.flash.power_cut(), Some(3000));
    let erased = m.flash.contents()[..65536]
        .iter()
        .filter(|&&b| b == 0xFF)
        .count();
    assert!(
        erased > 20_000 && erased < 45_000,
        "{erased} of 65536 bytes erased"
    );
    assert!(!m.flash.ops()[0].completed);
    // A dead chip: IO floats high.
    assert_eq!(m.xfer(&[0x05], 1), vec![0xFF]);
    assert_eq!(m.xfer(&[0x9F], 3), vec![0xFF; 3]);
}
