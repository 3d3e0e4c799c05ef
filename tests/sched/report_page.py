# SPDX-License-Identifier: Apache-2.0
"""What the report tests read back from a page (devplane simulate --report):
the node cards and their device boxes."""
import html
import re


def node_cards(page):
    """{node name: (data-inuse, [each device box's markup], the card's markup)}"""
    cards = {}
    for m in re.finditer(r'<div class="node f"([^>]*)>(.*?)</svg></div>', page, re.S):
        attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', m.group(1)))
        devs = re.findall(r'<g class="dev[^"]*" data-device="[^"]*">(.*?)</g>(?=<g class="dev|$)', m.group(2), re.S)
        cards[html.unescape(attrs.get("data-node", ""))] = (int(attrs.get("data-inuse", -1)), devs, m.group(2))
    return cards


def held_cells(box):
    """the cells of a device box drawn held (coloured by a workload)"""
    return len(re.findall(r'<rect [^>]*class="w\d+"', box))


def folded_into(card):
    """the names of the nodes folded into a card ("+N more nodes like this one")"""
    return [html.unescape(n) for n in re.findall(r'<span class="like-n f" id="n-\d+" data-node="([^"]*)"', card)]
