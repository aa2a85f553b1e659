package redisstore

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/redis/go-redis/v9"
)

// checkClient refuses a nil client, and an interface holding a nil
// pointer (a nil *redis.Client): what every constructor of the package
// is given, refused at start-up instead of panicking on the first call.
func checkClient(client redis.UniversalClient) error {
	if client == nil {
		return errors.New("redisstore: nil client")
	}
	if v := reflect.ValueOf(client); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("redisstore: the client is a nil %T", client)
	}
	return nil
}

// errLogNotMade is the error of an EventLog not made by NewEventLog.
var errLogNotMade = errors.New("redisstore: an EventLog not made by NewEventLog (use NewEventLog)")

// errBrokerNotMade is the error of a Broker not made by NewBroker.
var errBrokerNotMade = errors.New("redisstore: a Broker not made by NewBroker (use NewBroker)")

// errStoreNotMade is the error of the methods of a store (RateStore,
// ReplayStore, SessionStore) not made by its constructor.
var errStoreNotMade = errors.New("redisstore: a store not made by its constructor (use NewRateStore, NewReplayStore, NewSessionStore)")
