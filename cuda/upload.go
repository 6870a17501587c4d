package cuda

import (
	"errors"
	"fmt"
)

// Uploader moves raw pictures from host memory into pooled device frames on
// a stream of its own. It owns one page-locked block the size of a packed
// frame (the layout of a raw .nv12/.p010 file: the luma rows, then the
// chroma rows, no padding) and an event recorded after each copy out of it.
//
// The raw sources' four upload modes are built from its calls:
//
//   - direct: read the file straight into Buffer() (pread), then Upload.
//   - pinned: copy a picture from Go memory into Buffer(), then Upload.
//   - hwupload: UploadPageable from ordinary Go memory (the driver stages
//     the bytes itself, several times slower).
//   - resident: keep the whole file in one page-locked block (HostAlloc)
//     and UploadFrom it at each picture's offset.
//
// Every upload makes two 2D copies (one per plane) into a frame from the
// pool and marks the frame written; a reader's stream waits on that (Frame),
// the CPU does not. An Uploader is for one goroutine at a time.
type Uploader struct {
	pool   *FramePool
	stream *Stream
	block  *HostMemory
	done   *Event // recorded after every copy out of block
	size   int    // bytes of a packed frame
}

// NewUploader makes an uploader into frames of pool, its block allocated
// with flags (HostWriteCombined suits a block the CPU only writes).
func NewUploader(pool *FramePool, flags HostFlags) (*Uploader, error) {
	c := pool.ctx
	u := &Uploader{pool: pool, size: pool.format.Size(pool.width, pool.height)}
	var err error
	if u.stream, err = c.NewStream(); err != nil {
		return nil, err
	}
	if u.done, err = c.NewEvent(EventBlockingSync | EventDisableTiming); err != nil {
		u.stream.Close()
		return nil, err
	}
	if u.block, err = c.HostAlloc(u.size, flags); err != nil {
		u.done.Close()
		u.stream.Close()
		return nil, err
	}
	return u, nil
}

// Stream is the uploader's stream.
func (u *Uploader) Stream() *Stream { return u.stream }

// FrameBytes is the size of a packed picture.
func (u *Uploader) FrameBytes() int { return u.size }

// Buffer returns the page-locked block for the next picture, once the
// previous Upload has finished reading it (it blocks, sleeping, only if
// that copy is still running). Write the packed picture into it, then call
// Upload.
func (u *Uploader) Buffer() ([]byte, error) {
	if err := u.done.Synchronize(); err != nil {
		return nil, err
	}
	return u.block.Bytes(), nil
}

// Upload queues copying the picture in Buffer() into a new frame. The
// frame has one reference and no metadata; it is marked written.
func (u *Uploader) Upload() (*Frame, error) {
	fr, err := u.upload(u.block.Bytes())
	if err != nil {
		return nil, err
	}
	if err := u.done.Record(u.stream); err != nil {
		fr.Release()
		return nil, err
	}
	return fr, nil
}

// UploadFrom queues copying the packed picture at offset of a page-locked
// block (a resident file) into a new frame. The block must stay allocated
// and unchanged until the copy is done (Stream().Synchronize).
func (u *Uploader) UploadFrom(src *HostMemory, offset int) (*Frame, error) {
	b := src.Bytes()
	if offset < 0 || offset+u.size > len(b) {
		return nil, fmt.Errorf("cuda: upload of %d bytes at offset %d of a %d-byte block", u.size, offset, len(b))
	}
	return u.upload(b[offset : offset+u.size])
}

// UploadPageable copies a packed picture from ordinary (pageable) memory
// into a new frame; the driver stages it, so b may be reused on return.
func (u *Uploader) UploadPageable(b []byte) (*Frame, error) {
	if len(b) < u.size {
		return nil, fmt.Errorf("cuda: upload of a %d-byte picture from %d bytes", u.size, len(b))
	}
	return u.upload(b[:u.size])
}

func (u *Uploader) upload(src []byte) (*Frame, error) {
	fr, err := u.pool.Get(u.stream)
	if err != nil {
		return nil, err
	}
	row := fr.RowBytes()
	ys := row * fr.Height
	err = u.stream.Copy2D(DeviceRegion(fr.Plane[0], fr.Pitch), HostRegion(src[:ys], row), row, fr.Height)
	if err == nil {
		err = u.stream.Copy2D(DeviceRegion(fr.Plane[1], fr.Pitch), HostRegion(src[ys:], row), row, fr.Height/2)
	}
	if err == nil {
		err = fr.MarkWritten(u.stream)
	}
	if err != nil {
		fr.Release()
		return nil, fmt.Errorf("uploading a %dx%d %v picture: %w", fr.Width, fr.Height, fr.Format, err)
	}
	return fr, nil
}

// Close waits for the uploader's copies and frees its block, event and
// stream.
func (u *Uploader) Close() error {
	err := u.stream.Synchronize()
	return errors.Join(err, u.block.Free(), u.done.Close(), u.stream.Close())
}
