package money

import (
	"testing"
)

func TestParsePrice(t *testing.T) {
	for _, test := range []struct {
		in      string
		want    Micros
		wantErr bool
		format  string
	}{
		{"0.1", 100000, false, "0.10"},
		{"0.10", 100000, false, "0.10"},
		{".5", 500000, false, "0.50"},
		{"2", 2000000, false, "2.00"},
		{"1.234567", 1234567, false, "1.234567"},
		{" 3.5 ", 3500000, false, "3.50"},
		{"0", 0, false, "0.00"},
		{"1.2345678", 0, true, ""},
		{"1.2345670", 1234567, false, "1.234567"},
		{"-0.1", 0, true, ""},
		{"abc", 0, true, ""},
		{"1e3", 0, true, ""},
		{"", 0, true, ""},
		{".", 0, true, ""},
		{"1,5", 0, true, ""},
		{"NaN", 0, true, ""},
		{"99999999999999999999", 0, true, ""},
	} {
		got, err := ParsePrice(test.in)
		if (err != nil) != test.wantErr || got != test.want {
			t.Errorf("ParsePrice(%q) = %v, %v; want %v, err=%v", test.in, got, err, test.want, test.wantErr)
			continue
		}
		if err == nil && got.String() != test.format {
			t.Errorf("ParsePrice(%q).String() = %q, want %q", test.in, got.String(), test.format)
		}
	}
}

func TestExactSums(t *testing.T) {
	a, _ := ParsePrice("0.1")
	b, _ := ParsePrice("0.2")
	c, _ := ParsePrice("0.3")
	if a+b != c {
		t.Errorf("0.1 + 0.2 = %v, want %v", a+b, c)
	}
}

func TestParsePercent(t *testing.T) {
	for _, test := range []struct {
		in      string
		want    BasisPoints
		wantErr bool
	}{
		{"20", 2000, false}, {"12.5", 1250, false}, {"7.25 %", 725, false}, {"0", 0, false},
		{"100", 10000, false}, {"100.01", 0, true}, {"1.234", 0, true}, {"-5", 0, true}, {"x", 0, true},
	} {
		got, err := ParsePercent(test.in)
		if (err != nil) != test.wantErr || got != test.want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v, err=%v", test.in, got, err, test.want, test.wantErr)
		}
	}
	if p := BasisPoints(1250).Percent(); p != "12.5" {
		t.Errorf("Percent() = %q", p)
	}
}

func TestScale(t *testing.T) {
	if got := Micros(500000).Scale(9, 10); got != 450000 {
		t.Errorf("Scale = %v", got)
	}
	if got := Micros(1).Scale(1, 2); got != 1 {
		t.Errorf("half rounds away from zero: %v", got)
	}
}

func FuzzParsePrice(f *testing.F) {
	for _, s := range []string{"0.1", "1.234567", "12", ".5", "-1", "1e9", "999999999999.999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParsePrice(s)
		if err != nil {
			return
		}
		if m < 0 || m > MaxPrice {
			t.Fatalf("accepted %q as out-of-range %d", s, m)
		}
		back, err := ParsePrice(m.String())
		if err != nil || back != m {
			t.Fatalf("round trip of %q: %q -> %v, %v", s, m.String(), back, err)
		}
	})
}

func FuzzParsePercent(f *testing.F) {
	for _, s := range []string{"20", "12.5", "7.25 %", "100", "100.01", "-5", "1e2", " 5 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bp, err := ParsePercent(s)
		if err != nil {
			return
		}
		if bp < 0 || bp > 10000 {
			t.Fatalf("accepted %q as out-of-range %d", s, bp)
		}
		back, err := ParsePercent(bp.Percent())
		if err != nil || back != bp {
			t.Fatalf("round trip of %q: %q -> %v, %v", s, bp.Percent(), back, err)
		}
	})
}
