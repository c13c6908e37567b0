// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host tests of libnaaice without an RDMA device: the MRSP codec against
 * the specification's layouts byte by byte, the client's and the
 * software NAA's state machines fed with synthetic work completions (in
 * the orders a real CQ may deliver them), the MRSP request checks, and
 * the function kernels against known values.  KTAP output.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/ktap.h"
#include "naa_kernels.h"
#include "naaice_int.h"

static void test_codec(void)
{
	/* AAR, 2 entries: flags, 56-bit FPGA address, addr, rkey, size,
	 * all big-endian, the first entry at byte 4. */
	static const uint8_t aar[4 + 2 * 24] = {
		0x01, 0x02, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x7f, 0xfe, 0x12, 0x34, 0x56, 0x78,
		0xa1, 0xb2, 0xc3, 0xd4,
		0x00, 0x00, 0x00, 0x08,
		0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x10, 0x00, 0x00,
	};
	static const uint8_t adv[4 + 16] = {
		0x02, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x55, 0x55, 0x00, 0x00, 0x10, 0x00,
		0x00, 0x00, 0x01, 0x23,
		0x00, 0x00, 0x00, 0x40,
	};
	static const uint8_t err[4] = { 0x00, 0x03, 0x00, 0x00 };
	static struct naaice_mrsp_msg m, d;
	uint8_t buf[NAAICE_MRSP_BUF_LEN];
	int len;

	memset(&m, 0, sizeof(m));
	m.type = MSG_MR_AAR;
	m.count = 2;
	m.e[0] = (struct naaice_mrsp_entry){ 0, 0, 0x7ffe12345678ULL,
					     0xa1b2c3d4, 8 };
	m.e[1] = (struct naaice_mrsp_entry){ MRFLAG_INTERNAL,
					     0x01020304050607ULL, 0, 0,
					     0x100000 };
	memset(buf, 0xee, sizeof(buf));
	len = naaice_mrsp_encode(&m, buf, sizeof(buf));
	result(len == sizeof(aar) && !memcmp(buf, aar, sizeof(aar)),
	       "AAR with 2 entries: %d bytes, the specification's layout", len);
	result(!naaice_mrsp_decode(aar, sizeof(aar), &d) &&
	       d.type == MSG_MR_AAR && d.count == 2 &&
	       !memcmp(d.e, m.e, 2 * sizeof(m.e[0])),
	       "AAR decodes back to the same entries");
	result(naaice_mrsp_decode(aar, sizeof(aar) - 1, &d) == -1,
	       "a truncated AAR is refused");
	result(naaice_mrsp_encode(&m, buf, sizeof(aar) - 1) == -1,
	       "AAR does not encode into a short buffer");

	memset(&m, 0, sizeof(m));
	m.type = MSG_MR_A;
	m.count = 1;
	m.e[0] = (struct naaice_mrsp_entry){ 0, 0, 0x555500001000ULL, 0x123,
					     64 };
	len = naaice_mrsp_encode(&m, buf, sizeof(buf));
	result(len == sizeof(adv) && !memcmp(buf, adv, sizeof(adv)),
	       "A with 1 entry: 20 bytes, the specification's layout");
	result(!naaice_mrsp_decode(adv, sizeof(adv), &d) &&
	       d.type == MSG_MR_A && d.count == 1 &&
	       d.e[0].addr == 0x555500001000ULL && d.e[0].rkey == 0x123 &&
	       d.e[0].size == 64 && d.e[0].flags == 0,
	       "A decodes (no flags, no FPGA address)");

	memset(&m, 0, sizeof(m));
	m.type = MSG_MR_ERR;
	m.code = NAAICE_MRSP_ETOOMANY;
	len = naaice_mrsp_encode(&m, buf, sizeof(buf));
	result(len == 4 && !memcmp(buf, err, 4),
	       "error message: type 0, code, 2 bytes padding");
	result(!naaice_mrsp_decode(err, 2, &d) && d.type == MSG_MR_ERR &&
	       d.code == 3, "error message decodes from its first 2 bytes");

	buf[0] = MSG_MR_R;
	result(naaice_mrsp_decode(buf, 4, &d) == -1,
	       "type 0x03 (request, unused) is refused");
	buf[0] = 0x7f;
	result(naaice_mrsp_decode(buf, 4, &d) == -1, "unknown type refused");
	result(naaice_mrsp_decode(buf, 1, &d) == -1, "1-byte message refused");

	memset(&m, 0, sizeof(m));
	m.type = MSG_MR_AAR;
	m.count = 255;
	len = naaice_mrsp_encode(&m, buf, sizeof(buf));
	result(len == 4 + 255 * 24 && len == NAAICE_MRSP_BUF_LEN,
	       "255 entries fill the MRSP buffer exactly");
	buf[1] = 255;
	result(naaice_mrsp_decode(buf, 4 + 254 * 24, &d) == -1,
	       "count beyond the received length is refused");
}

static struct ibv_wc wc_of(enum naaice_wrid id, enum ibv_wc_opcode op,
			   uint32_t len)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = op;
	wc.byte_len = len;
	return wc;
}

static struct ibv_wc wc_imm(uint32_t imm)
{
	struct ibv_wc wc = wc_of(NAAICE_WRID_DATA_RECV,
				 IBV_WC_RECV_RDMA_WITH_IMM, 0);

	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(imm);
	return wc;
}

/* A client context with metadata + 2 parameters and no device. */
static struct naaice_communication_context *fake_client(enum naaice_wire w)
{
	struct naaice_communication_context *c = naaice_ctx_alloc();

	c->wire = w;
	c->no_local_mrs = 3;
	c->mr_local_data = calloc(3, sizeof(*c->mr_local_data));
	c->mr_local_data[0].addr = calloc(1, 8);
	c->mr_local_data[0].size = 8;
	c->mr_local_data[1].size = 100;
	c->mr_local_data[2].size = 4;
	c->state = MRSP_SENDING;
	return c;
}

static void put_adv(struct naaice_communication_context *c, unsigned int n,
		    uint32_t size)
{
	static struct naaice_mrsp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = MSG_MR_A;
	m.count = (uint8_t)n;
	for (unsigned int i = 0; i < n; i++)
		m.e[i] = (struct naaice_mrsp_entry){ 0, 0, 0x1000 * (i + 1),
						     i, size };
	naaice_mrsp_encode(&m, (uint8_t *)c->mr_local_message->addr,
			   NAAICE_MRSP_BUF_LEN);
}

static void test_client_states(void)
{
	struct naaice_communication_context *c = fake_client(NAAICE_WIRE_SPEC);
	struct ibv_wc wc;
	int rc;

	/* the NAA's answer before our own send completion */
	put_adv(c, 3, 128);
	wc = wc_of(NAAICE_WRID_MRSP_RECV, IBV_WC_RECV, 4 + 3 * 16);
	rc = naaice_handle_work_completion(&wc, c);
	result(!rc && c->state == MRSP_SENDING && c->no_peer_mrs == 3,
	       "MRSP answer before the send completion: still %s",
	       naaice_state_name(c->state));
	wc = wc_of(NAAICE_WRID_MRSP_SEND, IBV_WC_SEND, 0);
	rc = naaice_handle_work_completion(&wc, c);
	result(!rc && c->state == MRSP_DONE, "then the send completion: %s",
	       naaice_state_name(c->state));
	result(c->mr_peer_data[2].addr == 0x3000 &&
	       c->mr_peer_data[2].size == 128, "peer regions recorded");

	/* data: the result before the last write completions */
	c->state = DATA_SENDING;
	c->writes_posted = 3;
	c->rdma_writes_done = 0;
	wc = wc_of(NAAICE_WRID_WRITE, IBV_WC_RDMA_WRITE, 0);
	naaice_handle_work_completion(&wc, c);
	wc = wc_imm(0);
	rc = naaice_handle_work_completion(&wc, c);
	result(!rc && c->state == DATA_SENDING,
	       "result before 2 of 3 write completions: still %s",
	       naaice_state_name(c->state));
	wc = wc_of(NAAICE_WRID_WRITE, IBV_WC_RDMA_WRITE, 0);
	naaice_handle_work_completion(&wc, c);
	rc = naaice_handle_work_completion(&wc, c);
	result(!rc && c->state == FINISHED && !c->naa_returncode,
	       "after the last write completion: FINISHED, return code 0");

	/* in order, with an error return code */
	c->state = DATA_SENDING;
	c->rdma_writes_done = 0;
	c->result_received = false;
	for (int i = 0; i < 3; i++) {
		wc = wc_of(NAAICE_WRID_WRITE, IBV_WC_RDMA_WRITE, 0);
		naaice_handle_work_completion(&wc, c);
	}
	result(c->state == DATA_RECEIVING, "writes done: DATA_RECEIVING");
	wc = wc_imm(0x10);
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->state == FINISHED && c->naa_returncode == 0x10 &&
	       c->last_error == NAAICE_ERR_REMOTE,
	       "immediate 0x10 (spec wire): error 0x10 reported");

	wc = wc_of(NAAICE_WRID_DATA_RECV, IBV_WC_RECV, 0);
	c->state = DATA_RECEIVING;
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->state == ERROR &&
	       c->last_error == NAAICE_ERR_PROTOCOL,
	       "an answer without immediate is a protocol error");

	wc = wc_of(NAAICE_WRID_WRITE, IBV_WC_RDMA_WRITE, 0);
	wc.status = IBV_WC_RETRY_EXC_ERR;
	c->state = DATA_SENDING;
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->state == ERROR &&
	       c->last_error == NAAICE_ERR_TRANSFER,
	       "failed write completion: ERROR");
	naaice_destroy(c);

	/* MRSP errors and malformed answers */
	c = fake_client(NAAICE_WIRE_SPEC);
	memcpy(c->mr_local_message->addr, "\x00\x01\x00\x00", 4);
	wc = wc_of(NAAICE_WRID_MRSP_RECV, IBV_WC_RECV, 4);
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->state == ERROR && c->mrsp_error == 1 &&
	       c->last_error == NAAICE_ERR_MRSP,
	       "MRSP error 0x01 from the NAA: ERROR, code kept");
	c->state = MRSP_RECEIVING;
	put_adv(c, 2, 128);
	wc = wc_of(NAAICE_WRID_MRSP_RECV, IBV_WC_RECV, 4 + 2 * 16);
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->last_error == NAAICE_ERR_PROTOCOL,
	       "an advertisement with too few regions is refused");
	c->state = MRSP_RECEIVING;
	put_adv(c, 3, 2);
	wc = wc_of(NAAICE_WRID_MRSP_RECV, IBV_WC_RECV, 4 + 3 * 16);
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->last_error == NAAICE_ERR_PROTOCOL,
	       "an advertisement of too small regions is refused");
	naaice_destroy(c);

	/* upstream wire: 2 advertised regions, return code above bit 8 */
	c = fake_client(NAAICE_WIRE_UPSTREAM);
	put_adv(c, 2, 128);
	wc = wc_of(NAAICE_WRID_MRSP_RECV, IBV_WC_RECV, 4 + 2 * 16);
	rc = naaice_handle_work_completion(&wc, c);
	wc = wc_of(NAAICE_WRID_MRSP_SEND, IBV_WC_SEND, 0);
	rc |= naaice_handle_work_completion(&wc, c);
	result(!rc && c->state == MRSP_DONE && c->no_peer_mrs == 2,
	       "upstream wire: no metadata region advertised");
	c->state = DATA_SENDING;
	c->writes_posted = 1;
	c->rdma_writes_done = 0;
	wc = wc_imm(0x1100);
	naaice_handle_work_completion(&wc, c);
	wc = wc_of(NAAICE_WRID_WRITE, IBV_WC_RDMA_WRITE, 0);
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->naa_returncode == 0x11,
	       "upstream wire: immediate 0x1100 is return code 0x11");
	c->state = DATA_SENDING;
	c->rdma_writes_done = 0;
	c->result_received = false;
	wc = wc_imm(0x12);
	naaice_handle_work_completion(&wc, c);
	wc = wc_of(NAAICE_WRID_WRITE, IBV_WC_RDMA_WRITE, 0);
	rc = naaice_handle_work_completion(&wc, c);
	result(rc == -1 && c->naa_returncode == 0x12,
	       "upstream wire: the public NAA's low-byte code 0x12 too");
	naaice_destroy(c);
}

static void test_server(void)
{
	struct naaice_communication_context *s = naaice_ctx_alloc();
	static struct naaice_mrsp_msg m;
	struct ibv_wc wc;

	s->is_server = true;
	s->mem_limit = 1 << 20;
	s->max_mrs = 32;
	memset(&m, 0, sizeof(m));
	m.type = MSG_MR_AAR;
	m.count = 3;
	m.e[0].size = 8;
	m.e[1].size = 1000;
	m.e[2].size = 4;
	result(naaice_swnaa_check(s, &m) == 0, "a fitting request is granted");
	m.count = 33;
	result(naaice_swnaa_check(s, &m) == NAAICE_MRSP_ETOOMANY,
	       "33 regions: 0x03 too many regions");
	m.count = 3;
	m.e[1].size = (1 << 20) + 1;
	result(naaice_swnaa_check(s, &m) == NAAICE_MRSP_ENOMEM,
	       "more than the memory: 0x01 not enough memory");
	m.e[1].size = 1 << 19;
	m.e[2].size = 1 << 19;
	result(naaice_swnaa_check(s, &m) == NAAICE_MRSP_ENOMEM,
	       "regions that fit one by one but not together: 0x01");
	m.e[2].size = 4;
	m.e[2].flags = MRFLAG_INTERNAL;
	m.e[2].fpga_addr = 1 << 20;
	result(naaice_swnaa_check(s, &m) == NAAICE_MRSP_EADDR,
	       "internal region at the memory's end: 0x02 invalid address");
	m.e[2].fpga_addr = (1 << 20) - 2;
	result(naaice_swnaa_check(s, &m) == NAAICE_MRSP_ENOMEM,
	       "internal region crossing the end: 0x01");

	/* requests and result writes */
	s->state = DATA_RECEIVING;
	wc = wc_imm(3);
	result(!naaice_swnaa_handle_work_completion(&wc, s) &&
	       s->result_received && s->fncode == 3,
	       "spec wire: immediate 3 is function 3");
	s->wire = NAAICE_WIRE_UPSTREAM;
	wc = wc_imm(0xabcd00 | 0x80 | 4);
	result(!naaice_swnaa_handle_work_completion(&wc, s) &&
	       s->fncode == 4 && s->imm_user == 0xabcd,
	       "upstream wire: fn | 0x80 low, user bits above");
	s->state = DATA_SENDING;
	s->writes_posted = 2;
	s->rdma_writes_done = 0;
	wc = wc_of(NAAICE_WRID_WRITE, IBV_WC_RDMA_WRITE, 0);
	naaice_swnaa_handle_work_completion(&wc, s);
	result(s->state == DATA_SENDING, "1 of 2 result writes: DATA_SENDING");
	naaice_swnaa_handle_work_completion(&wc, s);
	result(s->state == FINISHED, "2 of 2: FINISHED");
	naaice_destroy(s);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static void test_kernels(void)
{
	uint8_t a[16], b[16], c[16], r[8];
	struct naa_buf in[2] = { { a, 16 }, { b, 16 } }, out = { c, 16 };
	struct naa_buf o8 = { r, 8 }, o4 = { r, 4 };
	static const uint8_t want[16] = { 19, 0, 0, 0, 22, 0, 0, 0,
					  43, 0, 0, 0, 50, 0, 0, 0 };

	result(naa_crc32c(0, (const uint8_t *)"123456789", 9) == 0xe3069283,
	       "CRC-32C check value of \"123456789\"");
	result(naa_crc32c(naa_crc32c(0, (const uint8_t *)"1234", 4),
			  (const uint8_t *)"56789", 5) == 0xe3069283,
	       "CRC-32C chains across regions");
	/* [[1 2] [3 4]] x [[5 6] [7 8]] = [[19 22] [43 50]] */
	le32(a, 1); le32(a + 4, 2); le32(a + 8, 3); le32(a + 12, 4);
	le32(b, 5); le32(b + 4, 6); le32(b + 8, 7); le32(b + 12, 8);
	result(!naa_run(NAA_FN_MATMUL, in, 2, &out) && !memcmp(c, want, 16),
	       "matmul 2x2");
	result(!naa_run(NAA_FN_ADD, in, 2, &out) && c[0] == 6 && c[4] == 8,
	       "add: element-wise byte sums");
	memset(a, 0xff, 16);
	memset(b, 0x02, 16);
	result(!naa_run(NAA_FN_ADD, in, 2, &out) && c[0] == 1,
	       "add wraps modulo 256");
	result(!naa_run(NAA_FN_SUM, in, 2, &o8) &&
	       r[0] == (uint8_t)(16 * 0xff + 32) && r[1] == (16 * 0xff + 32) >> 8,
	       "sum: u64 little-endian of all bytes");
	result(!naa_run(NAA_FN_CRC32C, in, 1, &o4), "crc32c runs");
	memset(c, 7, 16);
	result(!naa_run(NAA_FN_INC, in, 0, &out) && c[0] == 8 && c[15] == 8,
	       "inc: the result region's bytes + 1, in place");
	result(naa_run(99, in, 2, &out) == NAA_EUNKNOWN_FN,
	       "unknown function: 0x10");
	result(naa_run(NAA_FN_MATMUL, in, 1, &out) == NAA_ESHAPE,
	       "matmul with 1 input: 0x11");
	in[1].len = 15;
	result(naa_run(NAA_FN_ADD, in, 2, &out) == NAA_ESHAPE,
	       "add of unequal sizes: 0x11");
	result(naa_result_size(NAA_FN_MATMUL, 2, 12) == 0 &&
	       naa_result_size(NAA_FN_MATMUL, 2, 36) == 36,
	       "matmul sizes must be 4*n*n");
	result(naa_fn_parse("crc32c") == 3 && naa_fn_parse("0x10") == 16 &&
	       !naa_fn_parse("0") && !naa_fn_parse("bogus"),
	       "function names and codes parse");
}

static void test_names(void)
{
	enum naaice_wire w;

	result(!strcmp(naaice_state_name(MRSP_RECEIVING), "MRSP_RECEIVING") &&
	       !strcmp(naaice_state_name(ERROR), "ERROR") &&
	       MRSP_DONE == 12 && CALCULATING == 21 && ERROR == 40,
	       "state values and names as in the specification");
	result(!naaice_wire_parse("upstream", &w) && w == NAAICE_WIRE_UPSTREAM &&
	       naaice_wire_parse("v2", &w) == -1, "wire names parse");
	result(!strcmp(naaice_mrsp_error_str(2), "invalid address"),
	       "MRSP error strings");
}

int main(void)
{
	ktap_plan(54);
	test_codec();
	test_client_states();
	test_server();
	test_kernels();
	test_names();
	return test_finish("test_naaice", 54);
}
