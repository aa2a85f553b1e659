package jsonrpc

// TEMPORARY: replaced by the Limits of the JSON engine change (branch
// jsonengine); kept only until that lands.

// Limits bounds what the decoder accepts. Zero fields mean the defaults.
type Limits struct {
	MaxBytes   int64
	MaxIDBytes int
	MaxBatch   int
}

// Decode is [Decode] under l.
func (l Limits) Decode(data []byte) (Message, error) { return Decode(data, l.MaxBytes) }

// DecodeBatch is [DecodeBatch] under l.
func (l Limits) DecodeBatch(data []byte) ([]BatchItem, error) { return DecodeBatch(data, l.MaxBytes) }
