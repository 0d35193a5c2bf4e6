// 8b/10b encoding for the behavioural GTP model and the test's link partner
// (IEEE 802.3 clause 36 / Widmer-Franaszek tables). Codes are returned as
// {abcdei, fghj} with 'a' in bit 9, the bit sent first on the line.
// Test-only; included inside a module.

function automatic [5:0] gtpm_6b_rdm(input [4:0] x);  // 5b/6b, running disparity minus
    case (x)
        5'd0: gtpm_6b_rdm = 6'b100111;  5'd1: gtpm_6b_rdm = 6'b011101;
        5'd2: gtpm_6b_rdm = 6'b101101;  5'd3: gtpm_6b_rdm = 6'b110001;
        5'd4: gtpm_6b_rdm = 6'b110101;  5'd5: gtpm_6b_rdm = 6'b101001;
        5'd6: gtpm_6b_rdm = 6'b011001;  5'd7: gtpm_6b_rdm = 6'b111000;
        5'd8: gtpm_6b_rdm = 6'b111001;  5'd9: gtpm_6b_rdm = 6'b100101;
        5'd10: gtpm_6b_rdm = 6'b010101; 5'd11: gtpm_6b_rdm = 6'b110100;
        5'd12: gtpm_6b_rdm = 6'b001101; 5'd13: gtpm_6b_rdm = 6'b101100;
        5'd14: gtpm_6b_rdm = 6'b011100; 5'd15: gtpm_6b_rdm = 6'b010111;
        5'd16: gtpm_6b_rdm = 6'b011011; 5'd17: gtpm_6b_rdm = 6'b100011;
        5'd18: gtpm_6b_rdm = 6'b010011; 5'd19: gtpm_6b_rdm = 6'b110010;
        5'd20: gtpm_6b_rdm = 6'b001011; 5'd21: gtpm_6b_rdm = 6'b101010;
        5'd22: gtpm_6b_rdm = 6'b011010; 5'd23: gtpm_6b_rdm = 6'b111010;
        5'd24: gtpm_6b_rdm = 6'b110011; 5'd25: gtpm_6b_rdm = 6'b100110;
        5'd26: gtpm_6b_rdm = 6'b010110; 5'd27: gtpm_6b_rdm = 6'b110110;
        5'd28: gtpm_6b_rdm = 6'b001110; 5'd29: gtpm_6b_rdm = 6'b101110;
        5'd30: gtpm_6b_rdm = 6'b011110; default: gtpm_6b_rdm = 6'b101011;
    endcase
endfunction

function automatic [2:0] gtpm_ones4(input [3:0] v);
    gtpm_ones4 = {2'b0, v[0]} + {2'b0, v[1]} + {2'b0, v[2]} + {2'b0, v[3]};
endfunction

function automatic [2:0] gtpm_ones6(input [5:0] v);
    gtpm_ones6 = {2'b0, v[0]} + {2'b0, v[1]} + {2'b0, v[2]} + {2'b0, v[3]} + {2'b0, v[4]} + {2'b0, v[5]};
endfunction

// returns {running disparity after (1 = plus), code[9:0]}; rd: 1 = plus
function automatic [10:0] gtpm_enc(input k, input [7:0] d, input rd);
    reg [4:0] x;
    reg [2:0] y;
    reg [5:0] c6;
    reg [3:0] c4;
    reg r;
    begin
        x = d[4:0];
        y = d[7:5];
        r = rd;
        c6 = (k && x == 5'd28) ? 6'b001111 : gtpm_6b_rdm(x);
        if (r && (gtpm_ones6(c6) != 3'd3 || c6 == 6'b111000)) c6 = ~c6;
        if (gtpm_ones6(c6) != 3'd3) r = !r;
        if (k) begin
            case (y)
                3'd0: c4 = 4'b1011; 3'd1: c4 = 4'b0110; 3'd2: c4 = 4'b1010; 3'd3: c4 = 4'b1100;
                3'd4: c4 = 4'b1101; 3'd5: c4 = 4'b0101; 3'd6: c4 = 4'b1001; default: c4 = 4'b0111;
            endcase
            if (r) c4 = ~c4;
        end else begin
            case (y)
                3'd0: c4 = 4'b1011; 3'd1: c4 = 4'b1001; 3'd2: c4 = 4'b0101; 3'd3: c4 = 4'b1100;
                3'd4: c4 = 4'b1101; 3'd5: c4 = 4'b1010; 3'd6: c4 = 4'b0110;
                default: c4 = ((!r && (x == 5'd17 || x == 5'd18 || x == 5'd20)) ||
                               (r && (x == 5'd11 || x == 5'd13 || x == 5'd14))) ? 4'b0111 : 4'b1110;
            endcase
            if (r && (gtpm_ones4(c4) != 3'd2 || c4 == 4'b1100)) c4 = ~c4;
        end
        if (gtpm_ones4(c4) != 3'd2) r = !r;
        gtpm_enc = {r, c6, c4};
    end
endfunction

// the twelve valid K codes
function automatic gtpm_valid_k(input [7:0] d);
    gtpm_valid_k = d[4:0] == 5'd28 || d == 8'hF7 || d == 8'hFB || d == 8'hFD || d == 8'hFE;
endfunction
