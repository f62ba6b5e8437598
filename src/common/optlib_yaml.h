/* SPDX-License-Identifier: MIT */
/* optlib_yaml.h - libyaml, opened on first use (see optlib.h): the
 * agent's configuration file. */
#ifndef RTD_COMMON_OPTLIB_YAML_H
#define RTD_COMMON_OPTLIB_YAML_H

#include <yaml.h>

#include "common/optlib.h"

#define RTD_YAML_FUNCS(X)                                                      \
	X(yaml_parser_initialize) X(yaml_parser_set_input_string)              \
	X(yaml_parser_load) X(yaml_parser_delete) X(yaml_document_get_node)    \
	X(yaml_document_get_root_node) X(yaml_document_delete)
RTD_OPTLIB_DECLARE(yaml, RTD_YAML_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
#define yaml_parser_initialize (*rtd__yaml.yaml_parser_initialize)
#define yaml_parser_set_input_string (*rtd__yaml.yaml_parser_set_input_string)
#define yaml_parser_load (*rtd__yaml.yaml_parser_load)
#define yaml_parser_delete (*rtd__yaml.yaml_parser_delete)
#define yaml_document_get_node (*rtd__yaml.yaml_document_get_node)
#define yaml_document_get_root_node (*rtd__yaml.yaml_document_get_root_node)
#define yaml_document_delete (*rtd__yaml.yaml_document_delete)
#endif

#endif /* RTD_COMMON_OPTLIB_YAML_H */
