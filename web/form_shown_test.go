package web_test

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// formAsShown is what a browser would post from the form with id formID
// on the page at path, untouched: each named input's value (a checkbox or
// radio only when checked), each select's selected option (its first
// when none is) and each textarea's text; buttons are left out (the test
// sets op). A test that changes a few fields of a form a person sees
// filled posts the rest as they were, as the person's browser does.
func (c *client) formAsShown(path, formID string) url.Values {
	c.t.Helper()
	page := c.get(path)
	doc, err := html.Parse(strings.NewReader(page.body))
	if err != nil {
		c.t.Fatalf("%s: %v", path, err)
	}
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	text := func(n *html.Node) string {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return b.String()
	}
	var form *html.Node
	var find func(n *html.Node)
	find = func(n *html.Node) {
		if id, _ := attr(n, "id"); n.Type == html.ElementNode && n.Data == "form" && id == formID {
			form = n
		}
		for c := n.FirstChild; c != nil && form == nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if form == nil {
		c.t.Fatalf("%s: no form #%s (status %d)", path, formID, page.status)
	}
	out := url.Values{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		name, named := attr(n, "name")
		_, disabled := attr(n, "disabled")
		if n.Type == html.ElementNode && named && !disabled {
			switch n.Data {
			case "input":
				value, _ := attr(n, "value")
				kind, _ := attr(n, "type")
				_, checked := attr(n, "checked")
				switch kind {
				case "submit", "button", "image", "reset", "file":
				case "checkbox", "radio":
					if checked {
						out.Add(name, value)
					}
				default:
					out.Add(name, value)
				}
			case "textarea":
				out.Add(name, text(n))
			case "select":
				var first, chosen *html.Node
				for o := n.FirstChild; o != nil; o = o.NextSibling {
					if o.Type != html.ElementNode || o.Data != "option" {
						continue
					}
					if first == nil {
						first = o
					}
					if _, ok := attr(o, "selected"); ok && chosen == nil {
						chosen = o
					}
				}
				if chosen == nil {
					chosen = first
				}
				if chosen != nil {
					if v, ok := attr(chosen, "value"); ok {
						out.Add(name, v)
					} else {
						out.Add(name, strings.TrimSpace(text(chosen)))
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(form)
	return out
}
