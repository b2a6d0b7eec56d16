package account

import "testing"

func TestAlertEmailOn(t *testing.T) {
	yes, no := true, false
	for _, test := range []struct {
		role   CarrierRole
		choice *bool
		want   bool
	}{
		{CarrierAdmin, nil, true},   // admins answer for the listings: on by default
		{CarrierMember, nil, false}, // members: off by default
		{CarrierAdmin, &no, false},  // a choice wins over the default
		{CarrierMember, &yes, true},
	} {
		if got := AlertEmailOn(test.role, test.choice); got != test.want {
			t.Errorf("AlertEmailOn(%s, %v) = %v, want %v", test.role, test.choice, got, test.want)
		}
	}
}
