package shard_test

import (
	"fmt"

	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/shard"
)

// Three replicas split the UID hash space into equal ranges; each range is the shard
// selector its informers send to the apiserver.
func ExampleSplit() {
	for i, s := range shard.Split(informer.ShardByUID, 3) {
		fmt.Printf("replica %d: %s\n", i, s)
	}
	// Output:
	// replica 0: shardRange(object.metadata.uid, '0x0000000000000000', '0x5555555555555555')
	// replica 1: shardRange(object.metadata.uid, '0x5555555555555555', '0xaaaaaaaaaaaaaaaa')
	// replica 2: shardRange(object.metadata.uid, '0xaaaaaaaaaaaaaaaa', '0x10000000000000000')
}
