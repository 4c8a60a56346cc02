package tmpl

import (
	"fmt"
	"text/template/parse"
)

// instrument walks a parsed template: it refuses what can be refused
// before any render (a {{template}} call, a range over an integer literal
// above lim.MaxSteps) and puts a step — a call of stepFunc — at the start
// of every range body, so that every iteration, of every loop however
// nested, asks the render's budget first. Nothing else in a template
// loops: without a range, the work of a render is bounded by the
// template's length.
func instrument(n parse.Node, lim Limits) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := instrument(c, lim); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return fmt.Errorf("calls a template (%q): a message template cannot define or call templates", n.Name)
	case *parse.IfNode:
		return instrumentBranch(&n.BranchNode, lim)
	case *parse.WithNode:
		return instrumentBranch(&n.BranchNode, lim)
	case *parse.RangeNode:
		if k, ok := intLiteral(n.Pipe); ok && k > int64(lim.MaxSteps) {
			return fmt.Errorf("ranges over %d: a render takes at most %d steps (templates.max_steps)", k, lim.MaxSteps)
		}
		if err := instrumentBranch(&n.BranchNode, lim); err != nil {
			return err
		}
		if n.List == nil {
			n.List = &parse.ListNode{NodeType: parse.NodeList, Pos: n.Pos}
		}
		n.List.Nodes = append([]parse.Node{stepNode(n.Pos, n.Line)}, n.List.Nodes...)
	}
	return nil
}

func instrumentBranch(b *parse.BranchNode, lim Limits) error {
	if err := instrument(b.List, lim); err != nil {
		return err
	}
	if b.ElseList != nil {
		return instrument(b.ElseList, lim)
	}
	return nil
}

// stepNode is {{_herald_step}}: an action printing the empty string, or
// aborting the render with the budget's error.
func stepNode(pos parse.Pos, line int) parse.Node {
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Line: line,
		Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Line: line,
			Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: pos,
				Args: []parse.Node{&parse.IdentifierNode{NodeType: parse.NodeIdentifier, Pos: pos, Ident: stepFunc}}}}}}
}

// intLiteral is the value of a pipeline that is one integer literal
// ({{range 34}}).
func intLiteral(p *parse.PipeNode) (int64, bool) {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return 0, false
	}
	num, ok := p.Cmds[0].Args[0].(*parse.NumberNode)
	if !ok {
		return 0, false
	}
	switch {
	case num.IsInt:
		return num.Int64, true
	case num.IsUint:
		return int64(min(num.Uint64, 1<<63-1)), true
	}
	return 0, false
}
