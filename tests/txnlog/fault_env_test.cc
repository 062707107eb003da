#include "spool/txnlog/fault_env.h"

#include <gtest/gtest.h>
