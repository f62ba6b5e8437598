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
 * The entry for (provider, id) with the highest version not above the
 * event's; an event newer than every entry gets the newest (new versions
 * append fields, and the walk ignores bytes after the last known field).
 */
const struct nt_schema *nt_schema_find(const char *provider, uint32_t id,
				       uint32_t version)
{
	const struct nt_schema *best = NULL, *lowest = NULL;
	for (unsigned i = 0; i < nt_schema_count; i++) {
		const struct nt_schema *s = &nt_schema_table[i];
		if (s->event_id != id || strcmp(s->provider, provider))
			continue;
		if (!lowest || s->version < lowest->version)
			lowest = s;
		if (s->version <= version &&
		    (!best || s->version > best->version))
			best = s;
	}
	return best ? best : lowest;
}

const char *nt_known_name(const char *provider, uint32_t id)
{
	(void)provider;
	(void)id;
	return NULL;
}
