/* SPDX-License-Identifier: Apache-2.0
 *
 * list.h — doubly linked lists threaded through the objects themselves
 * (systemd's list.h): the object has `next` and `prev` pointers, the owner
 * one pointer to the first. Used where objects come and go in any order
 * and are found from the object, not by a search (gRPC streams and server
 * connections, the API client's requests).
 */
#pragma once

#include <stddef.h>

/* item becomes the first of the list at head. */
#define DP_LIST_PREPEND(head, item)                                                                                    \
        do {                                                                                                           \
                (item)->prev = NULL;                                                                                   \
                (item)->next = (head);                                                                                 \
                if (head) (head)->prev = (item);                                                                       \
                (head) = (item);                                                                                       \
        } while (0)

/* item leaves the list at head (an item in no list: nothing happens). */
#define DP_LIST_REMOVE(head, item)                                                                                     \
        do {                                                                                                           \
                if ((item)->prev)                                                                                      \
                        (item)->prev->next = (item)->next;                                                             \
                else if ((head) == (item))                                                                             \
                        (head) = (item)->next;                                                                         \
                if ((item)->next) (item)->next->prev = (item)->prev;                                                   \
                (item)->prev = (item)->next = NULL;                                                                    \
        } while (0)
