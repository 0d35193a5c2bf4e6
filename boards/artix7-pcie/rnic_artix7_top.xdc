# Constraints of rnic_artix7_top for a LiteFury (XC7A100T-FGG484) /
# NiteFury (XC7A200T-FBG484) class M.2 card. Sources of the pin numbers:
# - RHS Research's own NiteFury-and-LiteFury repository (sample projects):
#   refclk F6/E6, CLKREQ# G1, PERST# J1 ("early.xdc"); the GTP channel of
#   each PCIe lane and PCIE_X0Y0 / GTPE2_COMMON_X0Y1 (the "-fixed" PCIe IP
#   constraints); the LEDs G3 H3 G4 H4 and the SPI flash pins ("normal.xdc").
# - The package pins of lane 2 (C11/D11, C5/D5) appear only in a third-party
#   LiteFury constraints file, not in RHS Research's: UNVERIFIED.
# None of this has been checked against the card's schematic or run through
# nextpnr-xilinx by this project; the hierarchical cell names below are
# those of the Verilog (Yosys keeps them with -flatten as phy/lane[n].l/gtp;
# check them in the netlist if a tool reports a missing cell).

# ---------------------------------------------------------------------------
# PCIe reference clock (100 MHz, HCSL, into MGTREFCLK0 of GTP quad 216)
set_property PACKAGE_PIN F6 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN E6 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]

# PERST# and CLKREQ# (3.3 V bank)
set_property PACKAGE_PIN J1 [get_ports pcie_perst_n]
set_property IOSTANDARD LVCMOS33 [get_ports pcie_perst_n]
set_property PULLUP true [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]
set_property PACKAGE_PIN G1 [get_ports pcie_clkreq_n]
set_property IOSTANDARD LVCMOS33 [get_ports pcie_clkreq_n]

# ---------------------------------------------------------------------------
# Hard block and GTP placement. PCIe lane n of the block is GTP channel:
#   lane 0 -> GTPE2_CHANNEL_X0Y6   rx A10/B10 (n/p)  tx A6/B6
#   lane 1 -> GTPE2_CHANNEL_X0Y4   rx A8/B8          tx A4/B4
#   lane 2 -> GTPE2_CHANNEL_X0Y5   rx C11/D11        tx C5/D5   (pins UNVERIFIED)
#   lane 3 -> GTPE2_CHANNEL_X0Y7   rx C9/D9          tx C7/D7
#   quad PLL -> GTPE2_COMMON_X0Y1
# The channel sites and the quad are from the card maker's PCIe IP
# constraints; the pins follow from the sites (a GTP channel's pins are
# fixed by its site) and are given for tools that place by pin. The serial
# pins need no IOSTANDARD.
set_property PACKAGE_PIN B10 [get_ports {pcie_rx_p[0]}]
set_property PACKAGE_PIN A10 [get_ports {pcie_rx_n[0]}]
set_property PACKAGE_PIN B6  [get_ports {pcie_tx_p[0]}]
set_property PACKAGE_PIN A6  [get_ports {pcie_tx_n[0]}]
set_property PACKAGE_PIN B8  [get_ports {pcie_rx_p[1]}]
set_property PACKAGE_PIN A8  [get_ports {pcie_rx_n[1]}]
set_property PACKAGE_PIN B4  [get_ports {pcie_tx_p[1]}]
set_property PACKAGE_PIN A4  [get_ports {pcie_tx_n[1]}]
set_property PACKAGE_PIN D11 [get_ports {pcie_rx_p[2]}]
set_property PACKAGE_PIN C11 [get_ports {pcie_rx_n[2]}]
set_property PACKAGE_PIN D5  [get_ports {pcie_tx_p[2]}]
set_property PACKAGE_PIN C5  [get_ports {pcie_tx_n[2]}]
set_property PACKAGE_PIN D9  [get_ports {pcie_rx_p[3]}]
set_property PACKAGE_PIN C9  [get_ports {pcie_rx_n[3]}]
set_property PACKAGE_PIN D7  [get_ports {pcie_tx_p[3]}]
set_property PACKAGE_PIN C7  [get_ports {pcie_tx_n[3]}]
set_property LOC GTPE2_CHANNEL_X0Y6 [get_cells {phy/lane[0].l/gtp}]
set_property LOC GTPE2_CHANNEL_X0Y4 [get_cells {phy/lane[1].l/gtp}]
set_property LOC GTPE2_CHANNEL_X0Y5 [get_cells {phy/lane[2].l/gtp}]
set_property LOC GTPE2_CHANNEL_X0Y7 [get_cells {phy/lane[3].l/gtp}]
set_property LOC GTPE2_COMMON_X0Y1 [get_cells {phy/common}]
set_property LOC PCIE_X0Y0 [get_cells pcie_block]

# ---------------------------------------------------------------------------
# Clocks made inside: the MMCM's 125, 250 and 62.5 MHz outputs (user clocks,
# PIPE clock, the core's clock). Tools that derive generated clocks from the MMCM need only
# the reference clock above; these name them for reports. The PIPE
# clock (clk_125) and the GTP user clocks are the same net.
create_generated_clock -name clk_125 [get_pins mmcm/CLKOUT0]
create_generated_clock -name clk_250 [get_pins mmcm/CLKOUT1]
create_generated_clock -name clk_core [get_pins mmcm/CLKOUT2]

# The core's clock (62.5 MHz, CLK_MHZ 62) meets the user clock only in
# pcie_clock_crossing's FIFOs (axis_async_fifo): the Gray pointers and the
# resets cross through two ASYNC_REG flops, and the FIFO memory, written in
# one clock, is read in the other only after its pointer has crossed. The
# clocks come from one MMCM, so a tool would time these paths as
# synchronous; they are held instead to one period of the faster clock,
# so a Gray pointer never arrives more than one step skewed (set_max_delay,
# not set_clock_groups, which would override it).
set_max_delay -datapath_only 8.000 -from [get_cells -hierarchical -filter {NAME =~ *crossing/*fifo_inst/*_gray_reg*}] -to [get_cells -hierarchical -filter {NAME =~ *crossing/*fifo_inst/*_gray_*1_reg*}]
set_max_delay -datapath_only 8.000 -from [get_cells -hierarchical -filter {NAME =~ *crossing/*fifo_inst/mem*}] -to [get_cells -hierarchical -filter {NAME =~ *crossing/*fifo_inst/out_data_reg*}]
set_max_delay -datapath_only 8.000 -to [get_cells -hierarchical -filter {NAME =~ *crossing/*fifo_inst/*_rst_at_*_reg*}]

# ---------------------------------------------------------------------------
# Configuration flash (dedicated dual-purpose configuration pins, bank 14):
# FCS_B T19, D00..D03 P22 R22 P21 R21; CCLK is driven through STARTUPE2.
set_property PACKAGE_PIN T19 [get_ports flash_cs_n]
set_property PACKAGE_PIN P22 [get_ports {flash_dq[0]}]
set_property PACKAGE_PIN R22 [get_ports {flash_dq[1]}]
set_property PACKAGE_PIN P21 [get_ports {flash_dq[2]}]
set_property PACKAGE_PIN R21 [get_ports {flash_dq[3]}]
set_property IOSTANDARD LVCMOS33 [get_ports flash_cs_n]
set_property IOSTANDARD LVCMOS33 [get_ports {flash_dq[*]}]

# ---------------------------------------------------------------------------
# User LEDs (pulled up on the card: driven low = on, polarity UNVERIFIED)
set_property PACKAGE_PIN G3 [get_ports {led_n[0]}]
set_property PACKAGE_PIN H3 [get_ports {led_n[1]}]
set_property PACKAGE_PIN G4 [get_ports {led_n[2]}]
set_property PACKAGE_PIN H4 [get_ports {led_n[3]}]
set_property IOSTANDARD LVCMOS33 [get_ports {led_n[*]}]
set_property DRIVE 8 [get_ports {led_n[*]}]

# ---------------------------------------------------------------------------
# Bitstream: quad-SPI configuration at full speed, so the card is up before
# the host enumerates (values from the card maker's sample projects; these
# are Vivado properties, openXC7 may ignore them).
set_property CONFIG_VOLTAGE 3.3 [current_design]
set_property CFGBVS VCCO [current_design]
set_property CONFIG_MODE SPIx4 [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.EXTMASTERCCLK_EN Div-1 [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE YES [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
