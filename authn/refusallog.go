package authn

import (
	"time"
)

// refusalLogInterval is the interval over which the INFO lines about
// refused credentials are aggregated, per reason.
const refusalLogInterval = time.Minute
