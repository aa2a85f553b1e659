// Package fleet is the documents server run as an operator runs a fleet:
// several instances behind a plain load balancer, sharing one database
// (PostgreSQL, whose LISTEN/NOTIFY carries notifications), one Redis
// (sessions, the DPoP replay memory, rate limits, the event log from which
// a legacy stream resumes with Last-Event-ID) and one cursor key ring.
//
//	bash examples/fleet/run.sh      # Redis, PostgreSQL, an issuer, three instances, HAProxy
//
// haproxy.cfg is the balancer's configuration (round-robin, health checks
// on /healthz, no stickiness), issuer/ the fleet's development token
// issuer, and fleet_test.go the test that runs the same parts with real
// clients and kills some of them on the way.
package fleet
