#include "kir/kir.h"
