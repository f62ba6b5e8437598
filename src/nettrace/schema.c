/* SPDX-License-Identifier: MIT */
/*
 * schema.c - look up the built-in schemas of the runtime's providers
 * (schema_table.c, generated from clr_events.txt by gen_schema.py).
 */
#include <string.h>

#include "nettrace/nt.h"

extern const struct nt_schema nt_schema_table[];
extern const unsigned nt_schema_count;

/*
 * The entry for (provider, id) describing an event of this version: the
 * exact version; else the lowest newer entry, since newer versions only
 * append fields and the walk stops at the payload's end; else the newest
 * (an event newer than every entry: trailing bytes are ignored).
 */
const struct nt_schema *nt_schema_find(const char *provider, uint32_t id,
				       uint32_t version)
{
	const struct nt_schema *above = NULL, *below = NULL;
	for (unsigned i = 0; i < nt_schema_count; i++) {
		const struct nt_schema *s = &nt_schema_table[i];
		if (s->event_id != id || strcmp(s->provider, provider))
			continue;
		if (s->version == version)
			return s;
		if (s->version > version) {
			if (!above || s->version < above->version)
				above = s;
		} else if (!below || s->version > below->version) {
			below = s;
		}
	}
	return above ? above : below;
}
