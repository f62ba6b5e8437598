/* SPDX-License-Identifier: MIT */
/*
 * common_reader - fuzz the byte reader and the UTF-16 converter, and the
 * template every decoder's target follows: decode, check an invariant that
 * must hold for any input, never crash.
 *
 * The first byte picks a program of reads; the reader must never move past
 * its end and must report an error exactly when a read ran out.
 */
#include <stdint.h>
#include <stdlib.h>

#include "common/buf.h"
#include "common/rd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rtd_rd r;
	rd_init(&r, data, size);
	uint8_t prog = rd_u8(&r);
	while (rd_ok(&r) && rd_left(&r)) {
		switch (prog++ % 8) {
		case 0: (void)rd_varuint(&r); break;
		case 1: (void)rd_varuint32(&r); break;
		case 2: (void)rd_varint(&r); break;
		case 3: (void)rd_u32le(&r); break;
		case 4: (void)rd_u16be(&r); break;
		case 5: {
			rtd_rd sub;
			if (rd_sub(&r, rd_u8(&r), &sub))
				(void)rd_u64le(&sub);
			break;
		}
		case 6: {
			const uint8_t *p;
			size_t n = rd_u8(&r);
			if (rd_bytes(&r, n, &p)) {
				rtd_buf b;
				rtd_buf_init(&b, 64);
				int err = rtd_utf16le_to_utf8(p, n, 0, &b);
				if (!err && b.len > 64)
					abort();
				rtd_buf_free(&b);
			}
			break;
		}
		default: (void)rd_align(&r, 4); break;
		}
		if (r.p > r.end)
			abort();
	}
	return 0;
}
