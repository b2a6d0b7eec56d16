package account

import "testing"

func TestAlertEmailModeOf(t *testing.T) {
	each, off := AlertEmailEach, AlertEmailOff
	for _, test := range []struct {
		role   CarrierRole
		choice *AlertEmailMode
		want   AlertEmailMode
	}{
		{CarrierAdmin, nil, AlertEmailDigest}, // admins answer for the listings: a daily digest by default
		{CarrierMember, nil, AlertEmailOff},   // members: none by default
		{CarrierAdmin, &off, AlertEmailOff},   // a choice wins over the default
		{CarrierMember, &each, AlertEmailEach},
	} {
		if got := AlertEmailModeOf(test.role, test.choice); got != test.want {
			t.Errorf("AlertEmailModeOf(%s, %v) = %v, want %v", test.role, test.choice, got, test.want)
		}
	}
	for _, v := range []string{"each", "digest", "off"} {
		if m, err := ParseAlertEmailMode(v); err != nil || string(m) != v {
			t.Errorf("ParseAlertEmailMode(%q) = %q, %v", v, m, err)
		}
	}
	if _, err := ParseAlertEmailMode("on"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
