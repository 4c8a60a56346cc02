package auth

// UnknownKeysCached is how many unknown ids k remembers.
func UnknownKeysCached(k *Keys) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.unknown)
}
