package cuda

import (
	"github.com/onairhq/onair/nodes"
	goruntime "runtime"
	"sync"
)

// ReaderThreads is the size of the pool that reads direct raw sources'
// pictures: the few threads raw_video_file_cuda declares in the registry
// (the plan counts them), no more than the cores.
func ReaderThreads() int {
	n := 1
	if k, ok := nodes.Lookup("raw_video_file_cuda"); ok && k.Traits.Pool != nil {
		n = k.Traits.Pool.Threads
	}
	return max(1, min(n, goruntime.NumCPU()))
}

// readerPool runs reads on a few goroutines (each an OS thread while it
// waits in pread).
type readerPool struct {
	jobs chan func()
	wg   sync.WaitGroup
}

func (b *backend) startReaders() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.readers != nil {
		return
	}
	p := &readerPool{jobs: make(chan func(), 256)}
	for i := 0; i < ReaderThreads(); i++ {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for job := range p.jobs {
				job()
			}
		}()
	}
	b.readers = p
}

func (p *readerPool) submit(job func()) { p.jobs <- job }

func (p *readerPool) close() {
	close(p.jobs)
	p.wg.Wait()
}
