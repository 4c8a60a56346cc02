package rules

// The rules of who a delivery goes to, as SQL over the facts the enqueue
// statements read as they write: the user's devices (push).

// PushDeviceSQL is which devices a push notification goes to, as the
// condition on a device row d and a row r (platform, provider) of the
// push routing table (PushRoutes): an ACTIVE device, opted in to push,
// holding a token, whose platform has a provider — r.provider, the
// delivery's. An INVALID, opted-out or unrouted device gets no delivery.
const PushDeviceSQL = `d.status = 'ACTIVE' AND d.push_opt_in = TRUE AND d.token <> '' AND r.platform = d.platform`
