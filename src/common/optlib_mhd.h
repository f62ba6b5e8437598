/* SPDX-License-Identifier: MIT */
/* optlib_mhd.h - libmicrohttpd, opened on first use (see optlib.h): the
 * agent's HTTP server. */
#ifndef RTD_COMMON_OPTLIB_MHD_H
#define RTD_COMMON_OPTLIB_MHD_H

#include <microhttpd.h>

#include "common/optlib.h"

#define RTD_MHD_FUNCS(X)                                                       \
	X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_add_connection)           \
	X(MHD_get_connection_info) X(MHD_lookup_connection_value)              \
	X(MHD_create_response_from_buffer) X(MHD_add_response_header)          \
	X(MHD_queue_response) X(MHD_destroy_response)
RTD_OPTLIB_DECLARE(mhd, RTD_MHD_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
#define MHD_start_daemon (*rtd__mhd.MHD_start_daemon)
#define MHD_stop_daemon (*rtd__mhd.MHD_stop_daemon)
#define MHD_add_connection (*rtd__mhd.MHD_add_connection)
#define MHD_get_connection_info (*rtd__mhd.MHD_get_connection_info)
#define MHD_lookup_connection_value (*rtd__mhd.MHD_lookup_connection_value)
#define MHD_create_response_from_buffer (*rtd__mhd.MHD_create_response_from_buffer)
#define MHD_add_response_header (*rtd__mhd.MHD_add_response_header)
#define MHD_queue_response (*rtd__mhd.MHD_queue_response)
#define MHD_destroy_response (*rtd__mhd.MHD_destroy_response)
#endif

#endif /* RTD_COMMON_OPTLIB_MHD_H */
