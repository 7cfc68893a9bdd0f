/* config.h — loadmaster's command line: defaults, flags, and this node's
 * addresses taken from nodes.conf with --cluster. */
#ifndef MASTER_CONFIG_H
#define MASTER_CONFIG_H

#include "master.h"

/* Fills c from argv. Returns 0 to run, 1 to exit successfully (--help,
 * --version), -1 after printing what was wrong (exit 2). */
int master_config_parse(int argc, char **argv, master_config_t *c);

#endif
