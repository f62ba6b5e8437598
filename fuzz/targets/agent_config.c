/* SPDX-License-Identifier: MIT */
/*
 * agent_config - fuzz the agent's config file reader (libyaml underneath,
 * the option setters on top): any bytes give 0 or an error with a message,
 * never a crash; a config that loads writes back to YAML that loads again
 * to the same text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/agent.h"

static char *dump(const rtd_agent_config *c)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	if (!f)
		abort();
	if (rtd_agent_config_write(c, f))
		abort();
	fclose(f);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rtd_agent_config *c = rtd_agent_config_new();
	if (!c)
		return 0;
	int rc = rtd_agent_config_load_text(c, (const char *)data, size, "fuzz");
	if (rc && rc != -ENOMEM && !rtd_agent_config_errmsg(c)[0])
		abort(); /* an error always says why */
	if (rc == 0) {
		char *d1 = dump(c);
		rtd_agent_config *c2 = rtd_agent_config_new();
		if (rtd_agent_config_load_text(c2, d1, strlen(d1), "dump"))
			abort();
		char *d2 = dump(c2);
		if (strcmp(d1, d2))
			abort();
		free(d1);
		free(d2);
		rtd_agent_config_free(c2);
	}
	rtd_agent_config_free(c);
	return 0;
}
