/* Everything a tool needs from libtrace. */
#ifndef TRACEKIT_H
#define TRACEKIT_H

#include "block.h"
#include "bpf.h"
#include "cgroups.h"
#include "command.h"
#include "events.h"
#include "filter.h"
#include "flagnames.h"
#include "hist.h"
#include "json.h"
#include "kbtf.h"
#include "mapread.h"
#include "names.h"
#include "net.h"
#include "opts.h"
#include "output.h"
#include "setup.h"
#include "signames.h"
#include "syscalltp.h"
#include "tk_shared.h"

#endif
