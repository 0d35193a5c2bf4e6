-- Wireshark dissector for the mp transport of rnic (the multipath RDMA
-- transport of the rnic FPGA RoCEv2 NIC): the BTH opcodes 0xC0-0xC6 of the
-- InfiniBand manufacturer-specific range, with their extension headers
-- MPETH (placement), ImmDt, MCETH (completion), AETH and SNAKETH (the
-- selective NAK's bitmap of lost PSNs, also shown as the list of PSNs it
-- names), and the ICRC, verified. MP PROBE and MP PROBE REPLY (0xC5,
-- 0xC6, a path's probe and its answer) are a BTH alone; one with bytes
-- after its BTH is flagged malformed. Every other RoCEv2 packet goes on to
-- Wireshark's own InfiniBand dissector, unchanged.
--
--   tshark -X lua_script:host/rnic-wire/wireshark/rnic_mp.lua -r capture.pcap
--   wireshark -X lua_script:host/rnic-wire/wireshark/rnic_mp.lua capture.pcap
--
-- (or copy this file into Wireshark's personal Lua plugins directory).
-- Display filter: rnic_mp; fields rnic_mp.bth.*, rnic_mp.mpeth.*,
-- rnic_mp.immdt, rnic_mp.mceth.msg_len, rnic_mp.aeth.*, rnic_mp.snaketh.*,
-- rnic_mp.icrc*, rnic_mp.probe.not_empty.
--
-- The format is DESIGN.md section 5.2 of the rnic repository (the opcode
-- values also in hw/formats/rnic_formats.rdl); host/rnic-wire decodes the
-- same packets; host/rnic-wire/tests/tshark.rs compares the two on
-- synthesized frames and tests/mp_wire.rs on a capture of the simulator,
-- field by field.
--
-- Needs Wireshark 3.x or later (Lua 5.2 with bit32).

local ROCEV2_PORT = 4791

local MP_WRITE = 0xC0
local MP_WRITE_LAST = 0xC1
local MP_WRITE_LAST_IMM = 0xC2
local MP_ACK = 0xC3
local MP_SNAK = 0xC4
local MP_PROBE = 0xC5
local MP_PROBE_REPLY = 0xC6

local opcode_names = {
    [MP_WRITE] = "MP WRITE",
    [MP_WRITE_LAST] = "MP WRITE LAST",
    [MP_WRITE_LAST_IMM] = "MP WRITE LAST WITH IMMEDIATE",
    [MP_ACK] = "MP ACKNOWLEDGE",
    [MP_SNAK] = "MP SELECTIVE NAK",
    [MP_PROBE] = "MP PROBE",
    [MP_PROBE_REPLY] = "MP PROBE REPLY",
}

local aeth_kinds = { [0] = "ACK", [1] = "RNR NAK", [2] = "reserved", [3] = "NAK" }
local icrc_states = { [0] = "Bad", [1] = "Good" }

local p = Proto("rnic_mp", "rnic multipath transport (mp)")

local f = {
    opcode = ProtoField.uint8("rnic_mp.bth.opcode", "Opcode", base.HEX, opcode_names),
    se = ProtoField.bool("rnic_mp.bth.se", "Solicited Event", 8, nil, 0x80),
    m = ProtoField.bool("rnic_mp.bth.m", "MigReq", 8, nil, 0x40),
    padcnt = ProtoField.uint8("rnic_mp.bth.padcnt", "Pad Count", base.DEC, nil, 0x30),
    tver = ProtoField.uint8("rnic_mp.bth.tver", "Header Version", base.DEC, nil, 0x0F),
    pkey = ProtoField.uint16("rnic_mp.bth.p_key", "Partition Key", base.HEX),
    fecn = ProtoField.bool("rnic_mp.bth.fecn", "FECN", 8, nil, 0x80),
    becn = ProtoField.bool("rnic_mp.bth.becn", "BECN", 8, nil, 0x40),
    destqp = ProtoField.uint24("rnic_mp.bth.destqp", "Destination QP", base.HEX),
    ackreq = ProtoField.bool("rnic_mp.bth.a", "Acknowledge Request", 8, nil, 0x80),
    psn = ProtoField.uint24("rnic_mp.bth.psn", "Packet Sequence Number", base.DEC),
    mpeth_va = ProtoField.uint64("rnic_mp.mpeth.va", "Virtual Address (this packet)", base.HEX),
    mpeth_rkey = ProtoField.uint32("rnic_mp.mpeth.r_key", "Remote Key", base.HEX),
    mpeth_len = ProtoField.uint32("rnic_mp.mpeth.len", "Length (this packet's payload)", base.DEC),
    immdt = ProtoField.uint32("rnic_mp.immdt", "Immediate Data", base.HEX),
    mceth_len = ProtoField.uint32("rnic_mp.mceth.msg_len", "Message Length", base.DEC),
    aeth_syndrome = ProtoField.uint8("rnic_mp.aeth.syndrome", "Syndrome", base.HEX),
    aeth_kind = ProtoField.uint8("rnic_mp.aeth.kind", "Kind", base.DEC, aeth_kinds, 0x60),
    aeth_value = ProtoField.uint8("rnic_mp.aeth.value", "Credits / RNR timer / NAK code", base.DEC, nil, 0x1F),
    aeth_msn = ProtoField.uint24("rnic_mp.aeth.msn", "Message Sequence Number", base.DEC),
    snak_bitmap = ProtoField.bytes("rnic_mp.snaketh.bitmap", "Lost PSN Bitmap (bit i: PSN + 1 + i)"),
    snak_count = ProtoField.uint32("rnic_mp.snaketh.lost_count", "Lost PSNs", base.DEC),
    snak_psn = ProtoField.uint24("rnic_mp.snaketh.lost_psn", "Lost PSN", base.DEC),
    payload = ProtoField.bytes("rnic_mp.payload", "Payload"),
    payload_len = ProtoField.uint32("rnic_mp.payload_len", "Payload Length", base.DEC),
    icrc = ProtoField.uint32("rnic_mp.icrc", "Invariant CRC", base.HEX),
    icrc_status = ProtoField.uint8("rnic_mp.icrc.status", "Invariant CRC Status", base.DEC, icrc_states),
}
p.fields = {
    f.opcode, f.se, f.m, f.padcnt, f.tver, f.pkey, f.fecn, f.becn, f.destqp, f.ackreq, f.psn,
    f.mpeth_va, f.mpeth_rkey, f.mpeth_len, f.immdt, f.mceth_len,
    f.aeth_syndrome, f.aeth_kind, f.aeth_value, f.aeth_msn,
    f.snak_bitmap, f.snak_count, f.snak_psn,
    f.payload, f.payload_len, f.icrc, f.icrc_status,
}

local e_len = ProtoExpert.new("rnic_mp.mpeth.len_mismatch", "MPETH length differs from the payload",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_short = ProtoExpert.new("rnic_mp.short", "Packet shorter than its headers",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_icrc = ProtoExpert.new("rnic_mp.icrc.bad", "Bad invariant CRC",
    expert.group.CHECKSUM, expert.severity.ERROR)
local e_snak_syndrome = ProtoExpert.new("rnic_mp.snaketh.not_seq_nak",
    "SELECTIVE NAK whose AETH is not a PSN-sequence NAK (0x60)",
    expert.group.PROTOCOL, expert.severity.WARN)
local e_probe = ProtoExpert.new("rnic_mp.probe.not_empty",
    "PROBE / PROBE REPLY with bytes after its BTH",
    expert.group.MALFORMED, expert.severity.ERROR)
p.experts = { e_len, e_short, e_icrc, e_snak_syndrome, e_probe }

-- the IPv4 and UDP headers of the packet, for the ICRC
local ip_field = Field.new("ip")
local udp_field = Field.new("udp")

-- CRC-32 (reflected 0xEDB88320), table driven
local crc_table = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if bit32.band(c, 1) == 1 then
            c = bit32.bxor(bit32.rshift(c, 1), 0xEDB88320)
        else
            c = bit32.rshift(c, 1)
        end
    end
    crc_table[i] = c
end

local function crc_update(crc, bytes)
    for i = 0, bytes:len() - 1 do
        local idx = bit32.band(bit32.bxor(crc, bytes:get_index(i)), 0xFF)
        crc = bit32.bxor(bit32.rshift(crc, 8), crc_table[idx])
    end
    return crc
end

-- ICRC (RoCEv2): CRC-32 over 8 bytes of ones, the IPv4 header with TOS,
-- TTL and checksum as ones, the UDP header with its checksum as ones, the
-- BTH with byte 4 as ones, and the rest up to the ICRC. nil when the IPv4
-- or UDP header is not at hand.
local function icrc_of(tvb, n)
    local ips, udps = { ip_field() }, { udp_field() }
    local ipfi, udpfi = ips[#ips], udps[#udps]
    if ipfi == nil or udpfi == nil or ipfi.range:len() ~= 20 or udpfi.range:len() ~= 8 then
        return nil
    end
    local ip = ipfi.range:bytes()
    ip:set_index(1, 0xFF)
    ip:set_index(8, 0xFF)
    ip:set_index(10, 0xFF)
    ip:set_index(11, 0xFF)
    local udp = udpfi.range:bytes()
    udp:set_index(6, 0xFF)
    udp:set_index(7, 0xFF)
    local body = tvb(0, n):bytes()
    body:set_index(4, 0xFF)
    local crc = 0xFFFFFFFF
    crc = crc_update(crc, ByteArray.new("FFFFFFFFFFFFFFFF"))
    crc = crc_update(crc, ip)
    crc = crc_update(crc, udp)
    crc = crc_update(crc, body)
    return bit32.bnot(crc)
end

-- the dissector RoCEv2 had before this script: every non-mp packet
local roce = DissectorTable.get("udp.port"):get_dissector(ROCEV2_PORT)

function p.dissector(tvb, pinfo, tree)
    if tvb:len() < 1 then
        return 0
    end
    local op = tvb(0, 1):uint()
    if opcode_names[op] == nil then
        if roce ~= nil then
            return roce:call(tvb, pinfo, tree)
        end
        return 0
    end

    pinfo.cols.protocol = "rnic mp"
    local has_mpeth = op == MP_WRITE or op == MP_WRITE_LAST or op == MP_WRITE_LAST_IMM
    local has_aeth = op == MP_ACK or op == MP_SNAK
    local hlen = 12 + (has_mpeth and 16 or 0) + (op == MP_WRITE_LAST_IMM and 8 or 0)
        + (has_aeth and 4 or 0) + (op == MP_SNAK and 16 or 0)
    local t = tree:add(p, tvb(), "rnic mp, " .. opcode_names[op])
    if tvb:len() < hlen + 4 then
        t:add_proto_expert_info(e_short)
        return tvb:len()
    end

    local bth = t:add(tvb(0, 12), "Base Transport Header")
    bth:add(f.opcode, tvb(0, 1))
    bth:add(f.se, tvb(1, 1))
    bth:add(f.m, tvb(1, 1))
    bth:add(f.padcnt, tvb(1, 1))
    bth:add(f.tver, tvb(1, 1))
    bth:add(f.pkey, tvb(2, 2))
    bth:add(f.fecn, tvb(4, 1))
    bth:add(f.becn, tvb(4, 1))
    bth:add(f.destqp, tvb(5, 3))
    bth:add(f.ackreq, tvb(8, 1))
    bth:add(f.psn, tvb(9, 3))
    local psn = tvb(9, 3):uint()
    local info = opcode_names[op] .. " QP=" .. string.format("0x%06x", tvb(5, 3):uint()) .. " PSN=" .. psn

    local o = 12
    local mpeth_len
    if has_mpeth then
        local h = t:add(tvb(o, 16), "MPETH (mp placement)")
        h:add(f.mpeth_va, tvb(o, 8))
        h:add(f.mpeth_rkey, tvb(o + 8, 4))
        h:add(f.mpeth_len, tvb(o + 12, 4))
        mpeth_len = tvb(o + 12, 4):uint()
        info = info .. " VA=0x" .. tostring(tvb(o, 8):uint64():tohex()) .. " len=" .. mpeth_len
        o = o + 16
    end
    if op == MP_WRITE_LAST_IMM then
        t:add(f.immdt, tvb(o, 4))
        o = o + 4
        local h = t:add(tvb(o, 4), "MCETH (mp completion)")
        h:add(f.mceth_len, tvb(o, 4))
        info = info .. " msg_len=" .. tvb(o, 4):uint()
        o = o + 4
    end
    if has_aeth then
        local h = t:add(tvb(o, 4), "AETH")
        local syn = h:add(f.aeth_syndrome, tvb(o, 1))
        h:add(f.aeth_kind, tvb(o, 1))
        h:add(f.aeth_value, tvb(o, 1))
        h:add(f.aeth_msn, tvb(o + 1, 3))
        info = info .. " " .. aeth_kinds[bit32.rshift(bit32.band(tvb(o, 1):uint(), 0x60), 5)]
        if op == MP_SNAK and tvb(o, 1):uint() ~= 0x60 then
            syn:add_proto_expert_info(e_snak_syndrome)
        end
        o = o + 4
    end
    if op == MP_SNAK then
        -- the BTH PSN is lost, and PSN + 1 + i (mod 2^24) for every bit i
        -- of the 128-bit big-endian bitmap (bit 0: the last byte's LSB)
        local h = t:add(tvb(o, 16), "SNAKETH (mp selective NAK)")
        h:add(f.snak_bitmap, tvb(o, 16))
        local lost = { psn }
        for i = 0, 127 do
            local byte = tvb(o + 15 - math.floor(i / 8), 1):uint()
            if bit32.band(byte, bit32.lshift(1, i % 8)) ~= 0 then
                lost[#lost + 1] = (psn + 1 + i) % 0x1000000
            end
        end
        local c = h:add(f.snak_count, #lost)
        c:set_generated()
        for _, l in ipairs(lost) do
            c:add(f.snak_psn, l):set_generated()
        end
        info = info .. " lost=" .. #lost
        o = o + 16
    end

    local pad = bit32.rshift(bit32.band(tvb(1, 1):uint(), 0x30), 4)
    local n = tvb:len() - 4
    local plen = n - o - pad
    if plen < 0 then
        t:add_proto_expert_info(e_short)
        return tvb:len()
    end
    if plen > 0 then
        t:add(f.payload, tvb(o, plen))
    end
    local pl = t:add(f.payload_len, plen)
    pl:set_generated()
    if mpeth_len ~= nil and mpeth_len ~= plen then
        pl:add_proto_expert_info(e_len)
    end
    -- pad bytes count too: a probe is the BTH and the ICRC, nothing else
    if (op == MP_PROBE or op == MP_PROBE_REPLY) and n > o then
        pl:add_proto_expert_info(e_probe)
    end

    local ic = t:add(f.icrc, tvb(n, 4))
    local want = icrc_of(tvb, n)
    if want ~= nil then
        -- sent least significant byte first
        local got = tvb(n, 4):le_uint()
        local st = t:add(f.icrc_status, got == want and 1 or 0)
        st:set_generated()
        if got ~= want then
            ic:add_proto_expert_info(e_icrc)
        end
    end

    pinfo.cols.info = info
    return tvb:len()
end

DissectorTable.get("udp.port"):add(ROCEV2_PORT, p)
