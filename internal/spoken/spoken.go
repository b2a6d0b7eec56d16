// Package spoken holds the short spoken words the audio-input probe sends
// (recordings made once with eSpeak NG; see recordings/README.md). The probe
// draws one at random, so a fixed answer cannot pass; the fake carrier's
// honest mode recognises these recordings (it cannot hear other audio).
package spoken

import (
	"crypto/sha256"
	"embed"
	"fmt"
)

//go:embed recordings/*.wav
var files embed.FS

// Words are the words recorded, each a digit spoken in English.
var Words = []string{"three", "five", "seven", "nine"}

// Digits maps each word to its digit, which an answer may give instead.
var Digits = map[string]string{"three": "3", "five": "5", "seven": "7", "nine": "9"}

// WAV is the recording of a word.
func WAV(word string) ([]byte, error) {
	b, err := files.ReadFile("recordings/" + word + ".wav")
	if err != nil {
		return nil, fmt.Errorf("no recording of %q: %w", word, err)
	}
	return b, nil
}

// Recognise names the word of one of these recordings, "" for other audio.
func Recognise(wav []byte) string {
	sum := sha256.Sum256(wav)
	for _, w := range Words {
		if b, err := WAV(w); err == nil && sha256.Sum256(b) == sum {
			return w
		}
	}
	return ""
}
