/* SPDX-License-Identifier: MIT */
/*
 * ipc_reply - fuzz what the diagnostics IPC client decodes from a peer:
 * message headers, ProcessInfo 1-3 payloads, ADVR_V1 advertise messages,
 * and (from the CLI side) dotnet-trace provider strings.
 *
 * The first byte picks the decoder; the rest is its input. Invariant: a
 * failed ProcessInfo parse leaves no strings behind, a successful one
 * gives every string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet/ipc_int.h"
#include "rtdiag/ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t which = data[0] % 6;
	data++;
	size--;
	switch (which) {
	case 0:
	case 1:
	case 2: {
		struct rtd_ipc_process_info pi;
		int rc = rtd_ipc_process_info_parse(which + 1, data, size, &pi);
		if (rc == 0 && (!pi.cmdline || !pi.os || !pi.arch ||
				!pi.assembly || !pi.clr_version || !pi.rid))
			abort();
		if (rc != 0 && pi.cmdline)
			abort();
		rtd_ipc_process_info_clear(&pi);
		break;
	}
	case 3: {
		struct rtd_ipc_advertise a;
		(void)rtd_ipc_advertise_parse(data, size, &a);
		break;
	}
	case 4: {
		uint8_t s, i;
		uint16_t sz;
		if (size >= IPC_HEADER_SIZE &&
		    ipc_header_parse(data, &s, &i, &sz) == 0 && sz < 20)
			abort();
		break;
	}
	case 5: {
		char *t = malloc(size + 1);
		if (!t)
			return 0;
		memcpy(t, data, size);
		t[size] = 0;
		struct rtd_ipc_providers p = {0};
		char err[128];
		(void)rtd_ipc_providers_parse(t, &p, err, sizeof(err));
		rtd_ipc_providers_clear(&p);
		free(t);
		break;
	}
	}
	return 0;
}
