package spoken

import (
	"bytes"
	"testing"
)

func TestEachRecordingIsAWAVAndRecognised(t *testing.T) {
	for _, w := range Words {
		b, err := WAV(w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("RIFF")) || !bytes.Contains(b[:16], []byte("WAVE")) {
			t.Errorf("%s: not a WAV file", w)
		}
		if got := Recognise(b); got != w {
			t.Errorf("Recognise(%s) = %q", w, got)
		}
		if Digits[w] == "" {
			t.Errorf("%s has no digit", w)
		}
	}
	if got := Recognise([]byte("RIFF not a recording")); got != "" {
		t.Errorf("other audio recognised as %q", got)
	}
}
