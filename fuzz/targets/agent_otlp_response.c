/* SPDX-License-Identifier: MIT */
/*
 * agent_otlp_response - fuzz the agent's reader of an OTLP export's
 * answer (ExportProfilesServiceResponse, partial_success): any bytes give
 * 0 or a negative error, never a read past the end; the message written
 * is always terminated within its buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t rejected;
	char msg[8];
	memset(msg, 'x', sizeof(msg));
	int rc = otlp_parse_response(data, size, &rejected, msg, sizeof(msg));
	if (rc > 0)
		abort();
	if (!memchr(msg, 0, sizeof(msg)))
		abort();
	return 0;
}
