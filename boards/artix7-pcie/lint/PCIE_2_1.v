// Port declarations of Xilinx 7-series primitives for `verilator --lint-only`
// of the board top (firmware/build/lint-boards.sh reads boards/<board>/lint/
// only). Generated from the declarations in Yosys' techlibs/xilinx cell
// library (cells_xtra.v / cells_sim.v), reduced to the ports and parameters
// rnic_artix7_top uses; outputs tie to 0. Not a model: nothing here
// simulates the primitive.
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`timescale 1ns / 1ps

module PCIE_2_1 #(
    parameter [31:0] BAR0 = 32'hFFFFFF00,
    parameter [31:0] BAR1 = 32'hFFFF0000,
    parameter [31:0] BAR2 = 32'hFFFF000C,
    parameter [31:0] BAR3 = 32'hFFFFFFFF,
    parameter [31:0] BAR4 = 32'h00000000,
    parameter [31:0] BAR5 = 32'h00000000,
    parameter [23:0] CLASS_CODE = 24'h000000,
    parameter CMD_INTX_IMPLEMENTED = "TRUE",
    parameter DEV_CAP_EXT_TAG_SUPPORTED = "TRUE",
    parameter integer DEV_CAP_MAX_PAYLOAD_SUPPORTED = 2,
    parameter [31:0] EXPANSION_ROM = 32'hFFFFF001,
    parameter [7:0] INTERRUPT_PIN = 8'h01,
    parameter [3:0] LINK_CAP_MAX_LINK_SPEED = 4'h1,
    parameter [5:0] LINK_CAP_MAX_LINK_WIDTH = 6'h08,
    parameter [3:0] LINK_CTRL2_TARGET_LINK_SPEED = 4'h2,
    parameter MSIX_CAP_ON = "FALSE",
    parameter MSI_CAP_64_BIT_ADDR_CAPABLE = "TRUE",
    parameter integer MSI_CAP_MULTIMSGCAP = 0,
    parameter MSI_CAP_ON = "FALSE",
    parameter MSI_CAP_PER_VECTOR_MASKING_CAPABLE = "TRUE",
    parameter [3:0] PCIE_CAP_DEVICE_PORT_TYPE = 4'h0,
    parameter integer TL_RX_RAM_RDATA_LATENCY = 2,
    parameter integer TL_TX_RAM_RDATA_LATENCY = 2,
    parameter TRN_DW = "FALSE",
    parameter UPSTREAM_FACING = "TRUE",
    parameter USER_CLK2_DIV2 = "FALSE",
    parameter integer USER_CLK_FREQ = 3,
    parameter [12:0] VC0_RX_RAM_LIMIT = 13'h03FF,
    parameter integer VC0_TX_LASTPACKET = 31
) (
    output wire CFGINTERRUPTMSIENABLE,
    output wire CFGINTERRUPTRDYN,
    output wire CFGMSGRECEIVED,
    output wire MIMRXREN,
    output wire MIMRXWEN,
    output wire MIMTXREN,
    output wire MIMTXWEN,
    output wire PIPETXRATE,
    output wire PIPETXRCVRDET,
    output wire PIPETXDEEMPH,
    output wire PIPETXRESET,
    output wire [2:0] PIPETXMARGIN,
    output wire [15:0] PIPETX0DATA,
    output wire [1:0] PIPETX0CHARISK,
    output wire PIPETX0ELECIDLE,
    output wire PIPETX0COMPLIANCE,
    output wire [1:0] PIPETX0POWERDOWN,
    output wire PIPERX0POLARITY,
    output wire [15:0] PIPETX1DATA,
    output wire [1:0] PIPETX1CHARISK,
    output wire PIPETX1ELECIDLE,
    output wire PIPETX1COMPLIANCE,
    output wire [1:0] PIPETX1POWERDOWN,
    output wire PIPERX1POLARITY,
    output wire [15:0] PIPETX2DATA,
    output wire [1:0] PIPETX2CHARISK,
    output wire PIPETX2ELECIDLE,
    output wire PIPETX2COMPLIANCE,
    output wire [1:0] PIPETX2POWERDOWN,
    output wire PIPERX2POLARITY,
    output wire [15:0] PIPETX3DATA,
    output wire [1:0] PIPETX3CHARISK,
    output wire PIPETX3ELECIDLE,
    output wire PIPETX3COMPLIANCE,
    output wire [1:0] PIPETX3POWERDOWN,
    output wire PIPERX3POLARITY,
    output wire PLPHYLNKUPN,
    output wire TRNLNKUP,
    output wire TRNRECRCERR,
    output wire TRNREOF,
    output wire TRNRERRFWD,
    output wire TRNRSOF,
    output wire TRNRSRCDSC,
    output wire TRNRSRCRDY,
    output wire TRNTCFGREQ,
    output wire TRNTERRDROP,
    output wire USERRSTN,
    output wire [127:0] TRNRD,
    output wire [12:0] MIMRXRADDR,
    output wire [12:0] MIMRXWADDR,
    output wire [12:0] MIMTXRADDR,
    output wire [12:0] MIMTXWADDR,
    output wire [15:0] CFGMSGDATA,
    output wire [1:0] TRNRREM,
    output wire [2:0] CFGDEVCONTROLMAXPAYLOAD,
    output wire [2:0] CFGDEVCONTROLMAXREADREQ,
    output wire [2:0] CFGINTERRUPTMMENABLE,
    output wire [3:0] TRNTDSTRDY,
    output wire [5:0] PLLTSSMSTATE,
    output wire [5:0] TRNTBUFAV,
    output wire [67:0] MIMRXWDATA,
    output wire [68:0] MIMTXWDATA,
    output wire [7:0] CFGINTERRUPTDO,
    output wire [7:0] TRNRBARHIT,
    input wire CFGERRACSN,
    input wire CFGERRATOMICEGRESSBLOCKEDN,
    input wire CFGERRCORN,
    input wire CFGERRCPLABORTN,
    input wire CFGERRCPLTIMEOUTN,
    input wire CFGERRCPLUNEXPECTN,
    input wire CFGERRECRCN,
    input wire CFGERRINTERNALCORN,
    input wire CFGERRINTERNALUNCORN,
    input wire CFGERRLOCKEDN,
    input wire CFGERRMALFORMEDN,
    input wire CFGERRMCBLOCKEDN,
    input wire CFGERRNORECOVERYN,
    input wire CFGERRPOISONEDN,
    input wire CFGERRPOSTEDN,
    input wire CFGERRURN,
    input wire CFGFORCECOMMONCLOCKOFF,
    input wire CFGFORCEEXTENDEDSYNCON,
    input wire CFGINTERRUPTASSERTN,
    input wire CFGINTERRUPTN,
    input wire CFGINTERRUPTSTATN,
    input wire CFGMGMTRDENN,
    input wire CFGMGMTWRENN,
    input wire CFGMGMTWRREADONLYN,
    input wire CFGMGMTWRRW1CASRWN,
    input wire CFGPMFORCESTATEENN,
    input wire CFGPMHALTASPML0SN,
    input wire CFGPMHALTASPML1N,
    input wire CFGPMSENDPMETON,
    input wire CFGPMTURNOFFOKN,
    input wire CFGPMWAKEN,
    input wire CFGTRNPENDINGN,
    input wire CMRSTN,
    input wire CMSTICKYRSTN,
    input wire DBGSUBMODE,
    input wire DLRSTN,
    input wire DRPCLK,
    input wire DRPEN,
    input wire DRPWE,
    input wire FUNCLVLRSTN,
    input wire LL2SENDASREQL1,
    input wire LL2SENDENTERL1,
    input wire LL2SENDENTERL23,
    input wire LL2SENDPMACK,
    input wire LL2SUSPENDNOW,
    input wire LL2TLPRCV,
    input wire PIPECLK,
    input wire PIPERX0CHANISALIGNED,
    input wire PIPERX0ELECIDLE,
    input wire PIPERX0PHYSTATUS,
    input wire PIPERX0VALID,
    input wire PIPERX1CHANISALIGNED,
    input wire PIPERX1ELECIDLE,
    input wire PIPERX1PHYSTATUS,
    input wire PIPERX1VALID,
    input wire PIPERX2CHANISALIGNED,
    input wire PIPERX2ELECIDLE,
    input wire PIPERX2PHYSTATUS,
    input wire PIPERX2VALID,
    input wire PIPERX3CHANISALIGNED,
    input wire PIPERX3ELECIDLE,
    input wire PIPERX3PHYSTATUS,
    input wire PIPERX3VALID,
    input wire PIPERX4CHANISALIGNED,
    input wire PIPERX4ELECIDLE,
    input wire PIPERX4PHYSTATUS,
    input wire PIPERX4VALID,
    input wire PIPERX5CHANISALIGNED,
    input wire PIPERX5ELECIDLE,
    input wire PIPERX5PHYSTATUS,
    input wire PIPERX5VALID,
    input wire PIPERX6CHANISALIGNED,
    input wire PIPERX6ELECIDLE,
    input wire PIPERX6PHYSTATUS,
    input wire PIPERX6VALID,
    input wire PIPERX7CHANISALIGNED,
    input wire PIPERX7ELECIDLE,
    input wire PIPERX7PHYSTATUS,
    input wire PIPERX7VALID,
    input wire PLDIRECTEDLINKAUTON,
    input wire PLDIRECTEDLINKSPEED,
    input wire PLDIRECTEDLTSSMNEWVLD,
    input wire PLDIRECTEDLTSSMSTALL,
    input wire PLDOWNSTREAMDEEMPHSOURCE,
    input wire PLRSTN,
    input wire PLTRANSMITHOTRST,
    input wire PLUPSTREAMPREFERDEEMPH,
    input wire SYSRSTN,
    input wire TL2ASPMSUSPENDCREDITCHECK,
    input wire TL2PPMSUSPENDREQ,
    input wire TLRSTN,
    input wire TRNRDSTRDY,
    input wire TRNRFCPRET,
    input wire TRNRNPOK,
    input wire TRNRNPREQ,
    input wire TRNTCFGGNT,
    input wire TRNTDLLPSRCRDY,
    input wire TRNTECRCGEN,
    input wire TRNTEOF,
    input wire TRNTERRFWD,
    input wire TRNTSOF,
    input wire TRNTSRCDSC,
    input wire TRNTSRCRDY,
    input wire TRNTSTR,
    input wire USERCLK2,
    input wire USERCLK,
    input wire [127:0] CFGERRAERHEADERLOG,
    input wire [127:0] TRNTD,
    input wire [15:0] CFGDEVID,
    input wire [15:0] CFGSUBSYSID,
    input wire [15:0] CFGSUBSYSVENDID,
    input wire [15:0] CFGVENDID,
    input wire [15:0] DRPDI,
    input wire [15:0] PIPERX0DATA,
    input wire [15:0] PIPERX1DATA,
    input wire [15:0] PIPERX2DATA,
    input wire [15:0] PIPERX3DATA,
    input wire [15:0] PIPERX4DATA,
    input wire [15:0] PIPERX5DATA,
    input wire [15:0] PIPERX6DATA,
    input wire [15:0] PIPERX7DATA,
    input wire [1:0] CFGPMFORCESTATE,
    input wire [1:0] DBGMODE,
    input wire [1:0] PIPERX0CHARISK,
    input wire [1:0] PIPERX1CHARISK,
    input wire [1:0] PIPERX2CHARISK,
    input wire [1:0] PIPERX3CHARISK,
    input wire [1:0] PIPERX4CHARISK,
    input wire [1:0] PIPERX5CHARISK,
    input wire [1:0] PIPERX6CHARISK,
    input wire [1:0] PIPERX7CHARISK,
    input wire [1:0] PLDIRECTEDLINKCHANGE,
    input wire [1:0] PLDIRECTEDLINKWIDTH,
    input wire [1:0] TRNTREM,
    input wire [2:0] CFGDSFUNCTIONNUMBER,
    input wire [2:0] CFGFORCEMPS,
    input wire [2:0] PIPERX0STATUS,
    input wire [2:0] PIPERX1STATUS,
    input wire [2:0] PIPERX2STATUS,
    input wire [2:0] PIPERX3STATUS,
    input wire [2:0] PIPERX4STATUS,
    input wire [2:0] PIPERX5STATUS,
    input wire [2:0] PIPERX6STATUS,
    input wire [2:0] PIPERX7STATUS,
    input wire [2:0] PLDBGMODE,
    input wire [2:0] TRNFCSEL,
    input wire [31:0] CFGMGMTDI,
    input wire [31:0] TRNTDLLPDATA,
    input wire [3:0] CFGMGMTBYTEENN,
    input wire [47:0] CFGERRTLPCPLHEADER,
    input wire [4:0] CFGAERINTERRUPTMSGNUM,
    input wire [4:0] CFGDSDEVICENUMBER,
    input wire [4:0] CFGPCIECAPINTERRUPTMSGNUM,
    input wire [4:0] PL2DIRECTEDLSTATE,
    input wire [5:0] PLDIRECTEDLTSSMNEW,
    input wire [63:0] CFGDSN,
    input wire [67:0] MIMRXRDATA,
    input wire [68:0] MIMTXRDATA,
    input wire [7:0] CFGDSBUSNUMBER,
    input wire [7:0] CFGINTERRUPTDI,
    input wire [7:0] CFGPORTNUMBER,
    input wire [7:0] CFGREVID,
    input wire [8:0] DRPADDR,
    input wire [9:0] CFGMGMTDWADDR
);
assign CFGINTERRUPTMSIENABLE = '0;
assign CFGINTERRUPTRDYN = '0;
assign CFGMSGRECEIVED = '0;
assign MIMRXREN = '0;
assign MIMRXWEN = '0;
assign MIMTXREN = '0;
assign MIMTXWEN = '0;
assign PIPETXRATE = '0;
assign PIPETXRCVRDET = '0;
assign PIPETXDEEMPH = '0;
assign PIPETXRESET = '0;
assign PIPETXMARGIN = '0;
assign PIPETX0DATA = '0;
assign PIPETX0CHARISK = '0;
assign PIPETX0ELECIDLE = '0;
assign PIPETX0COMPLIANCE = '0;
assign PIPETX0POWERDOWN = '0;
assign PIPERX0POLARITY = '0;
assign PIPETX1DATA = '0;
assign PIPETX1CHARISK = '0;
assign PIPETX1ELECIDLE = '0;
assign PIPETX1COMPLIANCE = '0;
assign PIPETX1POWERDOWN = '0;
assign PIPERX1POLARITY = '0;
assign PIPETX2DATA = '0;
assign PIPETX2CHARISK = '0;
assign PIPETX2ELECIDLE = '0;
assign PIPETX2COMPLIANCE = '0;
assign PIPETX2POWERDOWN = '0;
assign PIPERX2POLARITY = '0;
assign PIPETX3DATA = '0;
assign PIPETX3CHARISK = '0;
assign PIPETX3ELECIDLE = '0;
assign PIPETX3COMPLIANCE = '0;
assign PIPETX3POWERDOWN = '0;
assign PIPERX3POLARITY = '0;
assign PLPHYLNKUPN = '0;
assign TRNLNKUP = '0;
assign TRNRECRCERR = '0;
assign TRNREOF = '0;
assign TRNRERRFWD = '0;
assign TRNRSOF = '0;
assign TRNRSRCDSC = '0;
assign TRNRSRCRDY = '0;
assign TRNTCFGREQ = '0;
assign TRNTERRDROP = '0;
assign USERRSTN = '0;
assign TRNRD = '0;
assign MIMRXRADDR = '0;
assign MIMRXWADDR = '0;
assign MIMTXRADDR = '0;
assign MIMTXWADDR = '0;
assign CFGMSGDATA = '0;
assign TRNRREM = '0;
assign CFGDEVCONTROLMAXPAYLOAD = '0;
assign CFGDEVCONTROLMAXREADREQ = '0;
assign CFGINTERRUPTMMENABLE = '0;
assign TRNTDSTRDY = '0;
assign PLLTSSMSTATE = '0;
assign TRNTBUFAV = '0;
assign MIMRXWDATA = '0;
assign MIMTXWDATA = '0;
assign CFGINTERRUPTDO = '0;
assign TRNRBARHIT = '0;
endmodule
